package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

func (s *server) sessionRoutes() {
	register(s, huma.Operation{
		OperationID: "login", Method: http.MethodGet, Path: "/login", Tags: []string{"session"},
		Summary: "Sign in with a one-time login link",
		Description: "Consumes the link's token (it works once, until it expires), starts a browser session " +
			"(the HttpOnly cookie " + sessionCookie + ") and redirects to /. A link that is invalid, already used or " +
			"expired is a 401: a small HTML page saying so, and how to get a new link, when the Accept header " +
			"prefers text/html to application/json (a browser following the link); the JSON error invalid_link otherwise. " +
			"A browser already signed in as another user gets a 409 (a page, or signed_in_as_other) and the link is " +
			"left unused: a link someone else planted cannot switch the account in one click.",
		DefaultStatus: http.StatusSeeOther,
		Errors:        []int{http.StatusUnauthorized, http.StatusConflict},
	}, public, s.login)
	documentLoginPage(s.api.OpenAPI().Paths["/login"].Get)
	register(s, huma.Operation{
		OperationID: "logout", Method: http.MethodPost, Path: "/api/logout", Tags: []string{"session"},
		Summary:       "End the browser session",
		Description:   "Deletes the session and clears its cookie. API tokens are revoked with DELETE /api/tokens/{id} instead.",
		DefaultStatus: http.StatusNoContent,
	}, signedIn, s.logout)
	register(s, huma.Operation{
		OperationID: "me", Method: http.MethodGet, Path: "/api/me", Tags: []string{"session"},
		Summary:     "Who the caller is",
		Description: "The caller's user record and, for a browser session, the CSRF token unsafe requests must send.",
	}, signedIn, s.me)
	register(s, huma.Operation{
		OperationID: "update-me", Method: http.MethodPatch, Path: "/api/me", Tags: []string{"session"},
		Summary:     "Change your display name, department or timezone",
		Description: "Absent fields keep their value. Returns what GET /api/me returns.",
	}, signedIn, s.updateMe)
}

type loginInput struct {
	Token   string `query:"token" required:"true" doc:"The secret of a one-time login link."`
	Session string `cookie:"quiver_session" doc:"The browser's current session, if any."`
}

// loginOutput is a redirect with the session cookie, or the failure page.
type loginOutput struct {
	Status      int
	Location    string       `header:"Location"`
	SetCookie   *http.Cookie `header:"Set-Cookie"`
	ContentType string       `header:"Content-Type"`
	CSP         string       `header:"Content-Security-Policy"`
	Body        []byte
}

type logoutOutput struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
}

// login trades a one-time link for a session. A link of a disabled user
// is as invalid as a used one.
func (s *server) login(ctx context.Context, in *loginInput) (*loginOutput, error) {
	now := s.now()
	if other, err := s.signedInAsOther(ctx, in, now); err != nil {
		return nil, err
	} else if other {
		if ri := infoFrom(ctx); ri != nil && ri.html {
			return loginOtherPage(), nil
		}
		return nil, apiErr(http.StatusConflict, "signed_in_as_other",
			"this browser is signed in as another user; sign out first (the link was not used)")
	}
	link, err := s.st.ConsumeCredential(ctx, store.CredLoginLink, HashSecret(in.Token), now)
	if err == nil {
		var u store.User
		if u, err = s.st.GetUser(ctx, link.OrgID, link.UserID); err == nil && !u.DisabledAt.IsZero() {
			err = store.ErrNotFound
		}
	}
	var secret string
	if err == nil {
		// PutCredential refuses a user disabled meanwhile (ErrNotFound).
		secret, err = IssueCredential(ctx, s.st, store.Credential{
			Kind: store.CredSession, OrgID: link.OrgID, UserID: link.UserID,
			CSRF: NewSecret(), CreatedAt: now, ExpiresAt: now.Add(s.sessionTTL),
		})
	}
	if errors.Is(err, store.ErrNotFound) {
		if ri := infoFrom(ctx); ri != nil && ri.html {
			return loginFailedPage(), nil
		}
		return nil, apiErr(http.StatusUnauthorized, "invalid_link", "this login link is invalid, already used or expired")
	}
	if err != nil {
		return nil, err
	}
	if ri := infoFrom(ctx); ri != nil {
		ri.orgID, ri.userID = link.OrgID, link.UserID
	}
	cookie := s.cookie(ctx, secret, s.sessionTTL)
	return &loginOutput{Status: http.StatusSeeOther, Location: "/", SetCookie: &cookie}, nil
}

// signedInAsOther reports whether the request carries a live session of a
// user other than the (still unused) link's; a bad or missing session or
// link is not, and the login goes on to its own checks.
func (s *server) signedInAsOther(ctx context.Context, in *loginInput, now time.Time) (bool, error) {
	if in.Session == "" {
		return false, nil
	}
	cur, err := s.st.LookupCredential(ctx, store.CredSession, HashSecret(in.Session), now)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	link, err := s.st.LookupCredential(ctx, store.CredLoginLink, HashSecret(in.Token), now)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return link.OrgID != cur.OrgID || link.UserID != cur.UserID, nil
}

// cookie is the session cookie; a zero maxAge deletes it.
func (s *server) cookie(ctx context.Context, value string, maxAge time.Duration) http.Cookie {
	secure := s.secureCookies
	if ri := infoFrom(ctx); ri != nil && ri.tls {
		secure = true
	}
	c := http.Cookie{
		Name: sessionCookie, Value: value, Path: "/",
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge <= 0 {
		c.MaxAge = -1 // Max-Age=0: delete now
	}
	return c
}

func (s *server) logout(ctx context.Context, _ *struct{}) (*logoutOutput, error) {
	a := authFrom(ctx)
	if a.kind != store.CredSession {
		return nil, apiErr(http.StatusBadRequest, "not_session", "logout ends a browser session; revoke an API token with DELETE /api/tokens/{id}")
	}
	if err := s.st.DeleteCredential(ctx, store.CredSession, a.hash); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return &logoutOutput{SetCookie: s.cookie(ctx, "", 0)}, nil
}

// Me is the caller as GET /api/me shows it.
type Me struct {
	UserID      string `json:"user_id"`
	OrgID       string `json:"org_id"`
	OrgName     string `json:"org_name"`
	DisplayName string `json:"display_name"`
	Department  string `json:"department"`
	Timezone    string `json:"timezone" doc:"The X-Timezone header when sent, else the stored zone; empty means UTC."`
	Role        string `json:"role" enum:"admin,member"`
	Auth        string `json:"auth" enum:"token,session" doc:"How the request authenticated."`
	CSRFToken   string `json:"csrf_token,omitempty" doc:"For sessions: the X-CSRF-Token value unsafe requests must carry."`
}

type meOutput struct{ Body Me }

func (s *server) me(ctx context.Context, _ *struct{}) (*meOutput, error) {
	return s.meOf(ctx, authFrom(ctx))
}

// meOf is what GET /api/me answers for a.
func (s *server) meOf(ctx context.Context, a *auth) (*meOutput, error) {
	org, err := s.st.GetOrg(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	me := Me{
		UserID: a.UserID, OrgID: a.OrgID, OrgName: org.Name, DisplayName: a.DisplayName,
		Department: a.Department, Timezone: a.Timezone, Role: a.Role, Auth: "token",
	}
	if a.kind == store.CredSession {
		me.Auth, me.CSRFToken = "session", a.csrf
	}
	return &meOutput{Body: me}, nil
}

type updateMeInput struct{ Body profileChange }

func (s *server) updateMe(ctx context.Context, in *updateMeInput) (*meOutput, error) {
	a := authFrom(ctx)
	// The profile only, applied to the user as stored in the write's
	// transaction: the role goes back as it is stored, never as read
	// before an admin's concurrent change.
	u, err := s.st.ModifyUser(ctx, a.OrgID, a.UserID, s.now(), func(u *store.User) error {
		role := u.Role
		err := in.Body.apply(u)
		u.Role = role
		return err
	})
	if err != nil {
		return nil, userError(err)
	}
	updated := *a
	updated.Caller = callerOf(u)
	if a.zoneHeader {
		updated.Timezone = a.Timezone
	}
	return s.meOf(ctx, &updated)
}
