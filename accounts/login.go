package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// LoginLink is a one-time login link just made: its secret (shown once)
// and when it stops working.
type LoginLink struct {
	Secret    string
	ExpiresAt time.Time
}

// loginLink is a login link for the user made at now, without its hash.
func loginLink(orgID, userID string, now time.Time) store.Credential {
	return store.Credential{
		Kind: store.CredLoginLink, OrgID: orgID, UserID: userID, CreatedAt: now, ExpiresAt: now.Add(LoginLinkTTL),
	}
}

// IssueLoginLink stores a new login link for the user, working once for
// LoginLinkTTL; earlier links keep working until used or expired. An
// unknown user gives ErrNoUser, a disabled one ErrUserDisabled (also when
// disabled between the check and the write), writing nothing.
func (s *Service) IssueLoginLink(ctx context.Context, orgID, userID string) (LoginLink, error) {
	u, err := s.User(ctx, orgID, userID)
	if err != nil {
		return LoginLink{}, err
	}
	if !u.DisabledAt.IsZero() {
		return LoginLink{}, ErrUserDisabled
	}
	c := loginLink(orgID, userID, s.now())
	secret, err := s.Issue(ctx, c)
	if err != nil {
		return LoginLink{}, err
	}
	return LoginLink{Secret: secret, ExpiresAt: c.ExpiresAt}, nil
}

// LinkAccount is who a login link signs in.
type LinkAccount struct {
	User store.User
	Org  store.Org
}

// PeekLink says who the login link of token signs in, without using it:
// nothing is written, so link previews can open it any number of times.
// session is the browser's current session secret ("" for none): a live
// session of another user gives ErrSignedInAsOther. A link that would not
// sign in gives ErrInvalidLink.
func (s *Service) PeekLink(ctx context.Context, token, session string) (LinkAccount, error) {
	now := s.now()
	if err := s.checkSession(ctx, session, token, now); err != nil {
		return LinkAccount{}, err
	}
	link, err := s.Store.LookupCredential(ctx, store.CredLoginLink, HashSecret(token), now)
	var a LinkAccount
	if err == nil {
		a.User, err = s.Store.GetUser(ctx, link.OrgID, link.UserID)
	}
	if err == nil && !a.User.DisabledAt.IsZero() {
		return LinkAccount{}, ErrInvalidLink
	}
	if err == nil {
		a.Org, err = s.Store.GetOrg(ctx, link.OrgID)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return LinkAccount{}, ErrInvalidLink
	case err != nil:
		return LinkAccount{}, fmt.Errorf("read login link: %w", err)
	}
	return a, nil
}

// Session is a browser session just started: Secret (the cookie's value)
// is shown once; Identity.Credential holds its hash and CSRF token.
type Session struct {
	Secret string
	Identity
}

// SignIn consumes the login link of token (atomically: of two concurrent
// sign-ins one wins) and starts a session of its user lasting SessionTTL.
// session is the browser's current session secret ("" for none): the
// same user's ends, replaced by the new one; another user's gives
// ErrSignedInAsOther and the link stays unused. A link that is unknown,
// used or expired, or whose user is disabled (also meanwhile), gives
// ErrInvalidLink.
func (s *Service) SignIn(ctx context.Context, token, session string) (Session, error) {
	now := s.now()
	if err := s.checkSession(ctx, session, token, now); err != nil {
		return Session{}, err
	}
	link, err := s.Store.ConsumeCredential(ctx, store.CredLoginLink, HashSecret(token), now)
	var u store.User
	if err == nil {
		if u, err = s.Store.GetUser(ctx, link.OrgID, link.UserID); err == nil && !u.DisabledAt.IsZero() {
			err = store.ErrNotFound
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Session{}, ErrInvalidLink
	case err != nil:
		return Session{}, fmt.Errorf("use login link: %w", err)
	}
	cred := store.Credential{
		Kind: store.CredSession, OrgID: link.OrgID, UserID: link.UserID,
		CSRF: s.secret(), CreatedAt: now, ExpiresAt: now.Add(s.sessionTTL()),
	}
	// Issue refuses a user disabled meanwhile.
	secret, err := s.Issue(ctx, cred)
	if errors.Is(err, ErrUserDisabled) {
		return Session{}, ErrInvalidLink
	} else if err != nil {
		return Session{}, err
	}
	cred.Hash = HashSecret(secret)
	// The browser's previous session (the same user's, or checkSession
	// refused) ends: a sign-in replaces it rather than adding one.
	if session != "" {
		if err := s.EndSession(ctx, HashSecret(session)); err != nil {
			return Session{}, fmt.Errorf("end the previous session: %w", err)
		}
	}
	return Session{Secret: secret, Identity: Identity{Credential: cred, User: u}}, nil
}

// EndSession deletes the session of that hash; one already gone is no
// error.
func (s *Service) EndSession(ctx context.Context, hash string) error {
	if err := s.Store.DeleteCredential(ctx, store.CredSession, hash); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// checkSession gives ErrSignedInAsOther when session is a live session
// of a user other than the (still unused) link's; a bad or missing
// session or link is not, and the sign-in goes on to its own checks.
func (s *Service) checkSession(ctx context.Context, session, token string, now time.Time) error {
	if session == "" {
		return nil
	}
	cur, err := s.Store.LookupCredential(ctx, store.CredSession, HashSecret(session), now)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read the current session: %w", err)
	}
	link, err := s.Store.LookupCredential(ctx, store.CredLoginLink, HashSecret(token), now)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read login link: %w", err)
	}
	if link.OrgID != cur.OrgID || link.UserID != cur.UserID {
		return ErrSignedInAsOther
	}
	return nil
}
