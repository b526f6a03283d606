package accounts_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a Service over a fresh SQLite store holding organisation
// org_a with alice (admin) and bob (member), a test clock and numbered
// secrets and ids.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	st    *sqlite.Store
	clock *testClock
	svc   *accounts.Service
	n     int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, ctx: ctx, st: st, clock: &testClock{t: start}}
	f.svc = &accounts.Service{
		Store: st, Agents: st, Now: f.clock.Now,
		Secrets: func() string { f.n++; return fmt.Sprintf("secret-%d", f.n) },
		IDs:     func(prefix string) string { f.n++; return fmt.Sprintf("%s%d", prefix, f.n) },
	}
	f.must(st.CreateOrg(ctx, store.Org{ID: "org_a", Name: "Acme", CreatedAt: start}))
	for _, u := range []store.User{
		{ID: "alice", OrgID: "org_a", DisplayName: "Alice", Role: store.RoleAdmin, CreatedAt: start, UpdatedAt: start},
		{ID: "bob", OrgID: "org_a", DisplayName: "Bob", Role: store.RoleMember, CreatedAt: start, UpdatedAt: start},
	} {
		f.must(st.CreateUser(ctx, u))
	}
	return f
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// link issues a login link for the user.
func (f *fixture) link(user string) string {
	f.t.Helper()
	l, err := f.svc.IssueLoginLink(f.ctx, "org_a", user)
	f.must(err)
	return l.Secret
}

// creds lists every credential of the user, of every kind.
func (f *fixture) creds(user string) []store.Credential {
	f.t.Helper()
	var out []store.Credential
	for _, kind := range []string{store.CredLoginLink, store.CredSession, store.CredAPIToken} {
		cs, err := f.st.ListCredentials(f.ctx, "org_a", user, kind)
		f.must(err)
		out = append(out, cs...)
	}
	return out
}

func TestHashSecret(t *testing.T) {
	// The SHA-256 of "abc": what a stored credential's hash is.
	if got, want := accounts.HashSecret("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("HashSecret(abc) = %s, want %s", got, want)
	}
	a, b := accounts.NewSecret(), accounts.NewSecret()
	if a == b || len(a) != 43 {
		t.Errorf("NewSecret gave %q and %q: want two different 32-byte unpadded base64url strings", a, b)
	}
}

// TestLoginLinkWorksOnce: a link signs in once; used again, after it
// expired, or for a user disabled since, it refuses with ErrInvalidLink.
func TestLoginLinkWorksOnce(t *testing.T) {
	f := newFixture(t)
	used := f.link("bob")
	sess, err := f.svc.SignIn(f.ctx, used, "")
	f.must(err)
	if sess.User.ID != "bob" || sess.Credential.Kind != store.CredSession || sess.Credential.CSRF == "" ||
		!sess.Credential.ExpiresAt.Equal(start.Add(accounts.DefaultSessionTTL)) {
		t.Fatalf("session %+v: want bob's, with a CSRF token, for the default lifetime", sess)
	}
	if id, err := f.svc.Authenticate(f.ctx, store.CredSession, sess.Secret); err != nil || id.User.ID != "bob" {
		t.Fatalf("the new session authenticates %+v, %v; want bob", id, err)
	}
	expired := f.link("bob")
	disabled := f.link("alice") // alice is disabled below
	f.must(f.st.CreateUser(f.ctx, store.User{ID: "carol", OrgID: "org_a", DisplayName: "Carol", Role: store.RoleAdmin, CreatedAt: start, UpdatedAt: start}))
	f.must(f.st.DisableUser(f.ctx, "org_a", "alice", start))
	f.clock.Advance(accounts.LoginLinkTTL - time.Second)
	if _, err := f.svc.SignIn(f.ctx, used, ""); !errors.Is(err, accounts.ErrInvalidLink) {
		t.Errorf("a used link: %v, want ErrInvalidLink", err)
	}
	if _, err := f.svc.SignIn(f.ctx, disabled, ""); !errors.Is(err, accounts.ErrInvalidLink) {
		t.Errorf("a disabled user's link: %v, want ErrInvalidLink", err)
	}
	f.clock.Advance(time.Second)
	if _, err := f.svc.PeekLink(f.ctx, expired, ""); !errors.Is(err, accounts.ErrInvalidLink) {
		t.Errorf("peek at an expired link: %v, want ErrInvalidLink", err)
	}
	if _, err := f.svc.SignIn(f.ctx, expired, ""); !errors.Is(err, accounts.ErrInvalidLink) {
		t.Errorf("an expired link: %v, want ErrInvalidLink", err)
	}
	if got := len(f.creds("bob")); got != 2 {
		t.Errorf("bob holds %d credentials, want 2: the session and the expired link, nothing new", got)
	}
}

// TestPeekLinkChangesNothing: looking at a link names its account and
// organisation and leaves it usable.
func TestPeekLinkChangesNothing(t *testing.T) {
	f := newFixture(t)
	link := f.link("bob")
	before := f.creds("bob")
	for range 3 {
		a, err := f.svc.PeekLink(f.ctx, link, "")
		f.must(err)
		if a.User.ID != "bob" || a.Org.Name != "Acme" {
			t.Fatalf("peek: %+v, want bob of Acme", a)
		}
	}
	if diff := cmp.Diff(before, f.creds("bob")); diff != "" {
		t.Errorf("credentials after peeking (-before +after):\n%s", diff)
	}
	if _, err := f.svc.PeekLink(f.ctx, "not-a-link", ""); !errors.Is(err, accounts.ErrInvalidLink) {
		t.Errorf("peek at an unknown link: %v, want ErrInvalidLink", err)
	}
}

// TestSignInWithASession: a browser signed in as another user gets
// ErrSignedInAsOther and the link stays unused; the same user's session
// is replaced by the new one.
func TestSignInWithASession(t *testing.T) {
	f := newFixture(t)
	alice, err := f.svc.SignIn(f.ctx, f.link("alice"), "")
	f.must(err)
	bobs := f.link("bob")
	if _, err := f.svc.PeekLink(f.ctx, bobs, alice.Secret); !errors.Is(err, accounts.ErrSignedInAsOther) {
		t.Errorf("peek with alice's session: %v, want ErrSignedInAsOther", err)
	}
	if _, err := f.svc.SignIn(f.ctx, bobs, alice.Secret); !errors.Is(err, accounts.ErrSignedInAsOther) {
		t.Errorf("sign in with alice's session: %v, want ErrSignedInAsOther", err)
	}
	bob, err := f.svc.SignIn(f.ctx, bobs, "")
	if err != nil {
		t.Fatalf("bob's link after the refusals: %v, want it unused", err)
	}
	again, err := f.svc.SignIn(f.ctx, f.link("bob"), bob.Secret)
	f.must(err)
	if _, err := f.svc.Authenticate(f.ctx, store.CredSession, bob.Secret); !errors.Is(err, accounts.ErrInvalidCredential) {
		t.Errorf("the replaced session: %v, want ErrInvalidCredential", err)
	}
	if _, err := f.svc.Authenticate(f.ctx, store.CredSession, again.Secret); err != nil {
		t.Errorf("the new session: %v", err)
	}
	f.must(f.svc.EndSession(f.ctx, again.Credential.Hash))
	f.must(f.svc.EndSession(f.ctx, again.Credential.Hash)) // gone already: no error
	if _, err := f.svc.Authenticate(f.ctx, store.CredSession, again.Secret); !errors.Is(err, accounts.ErrInvalidCredential) {
		t.Errorf("an ended session: %v, want ErrInvalidCredential", err)
	}
}

// TestAuthenticate: an unknown secret and an expired token are invalid; a
// disabled user's credential that survived is refused as disabled.
func TestAuthenticate(t *testing.T) {
	f := newFixture(t)
	tok, err := f.svc.CreateToken(f.ctx, "org_a", "bob", "ci", 1)
	f.must(err)
	survivor, err := f.svc.Issue(f.ctx, store.Credential{Kind: store.CredAPIToken, OrgID: "org_a", UserID: "alice", CreatedAt: start})
	f.must(err)
	if id, err := f.svc.Authenticate(f.ctx, store.CredAPIToken, tok.Secret); err != nil || id.User.ID != "bob" || id.Credential.Label != "ci" {
		t.Fatalf("bob's token: %+v, %v", id, err)
	}
	if _, err := f.svc.Authenticate(f.ctx, store.CredSession, tok.Secret); !errors.Is(err, accounts.ErrInvalidCredential) {
		t.Errorf("a token as a session: %v, want ErrInvalidCredential", err)
	}
	// Disabling deletes credentials; mark alice disabled directly, as a
	// credential that survived would leave her.
	staleStore := disabledUser{Accounts: f.st, id: "alice"}
	stale := &accounts.Service{Store: staleStore, Now: f.clock.Now}
	if _, err := stale.Authenticate(f.ctx, store.CredAPIToken, survivor); !errors.Is(err, accounts.ErrUserDisabled) {
		t.Errorf("a disabled user's surviving token: %v, want ErrUserDisabled", err)
	}
	f.clock.Advance(24 * time.Hour)
	if _, err := f.svc.Authenticate(f.ctx, store.CredAPIToken, tok.Secret); !errors.Is(err, accounts.ErrInvalidCredential) {
		t.Errorf("an expired token: %v, want ErrInvalidCredential", err)
	}
}

// disabledUser answers GetUser with the user disabled.
type disabledUser struct {
	store.Accounts
	id string
}

func (d disabledUser) GetUser(ctx context.Context, orgID, id string) (store.User, error) {
	u, err := d.Accounts.GetUser(ctx, orgID, id)
	if err == nil && id == d.id {
		u.DisabledAt = start
	}
	return u, err
}

// TestCreateToken: a lifetime in days expires the token that many days
// later, 0 never; a label or lifetime out of bounds writes nothing.
func TestCreateToken(t *testing.T) {
	f := newFixture(t)
	forever, err := f.svc.CreateToken(f.ctx, "org_a", "bob", "laptop", 0)
	f.must(err)
	if !forever.Credential.ExpiresAt.IsZero() {
		t.Errorf("0 days: expires %v, want never", forever.Credential.ExpiresAt)
	}
	week, err := f.svc.CreateToken(f.ctx, "org_a", "bob", "ci", 7)
	f.must(err)
	if want := start.Add(7 * 24 * time.Hour); !week.Credential.ExpiresAt.Equal(want) {
		t.Errorf("7 days: expires %v, want %v", week.Credential.ExpiresAt, want)
	}
	if id := accounts.TokenID(week.Credential); len(id) != accounts.TokenIDLen || id != accounts.HashSecret(week.Secret)[:accounts.TokenIDLen] {
		t.Errorf("token id %q: want the first %d hex digits of the secret's hash", id, accounts.TokenIDLen)
	}
	before := f.creds("bob")
	for _, tc := range []struct {
		name, label string
		days        int
		field       string
	}{
		{"NegativeDays", "x", -1, "expires_in_days"},
		{"TooManyDays", "x", accounts.MaxTokenDays + 1, "expires_in_days"},
		{"LongLabel", string(make([]rune, accounts.MaxTokenLabel+1)), 1, "label"},
	} {
		_, err := f.svc.CreateToken(f.ctx, "org_a", "bob", tc.label, tc.days)
		var bad *accounts.InvalidError
		if !errors.As(err, &bad) || bad.Field != tc.field {
			t.Errorf("%s: %v, want an *InvalidError for %s", tc.name, err, tc.field)
		}
	}
	if diff := cmp.Diff(before, f.creds("bob")); diff != "" {
		t.Errorf("credentials after refused tokens (-before +after):\n%s", diff)
	}
}

// TestTokenCap: a user holds at most MaxTokens unexpired tokens; an
// expired one does not count, and a revoked one frees its place.
func TestTokenCap(t *testing.T) {
	f := newFixture(t)
	soon, err := f.svc.CreateToken(f.ctx, "org_a", "bob", "soon", 1)
	f.must(err)
	var last accounts.NewToken
	for i := 1; i < accounts.MaxTokens; i++ {
		last, err = f.svc.CreateToken(f.ctx, "org_a", "bob", "", 0)
		f.must(err)
	}
	before := f.creds("bob")
	_, err = f.svc.CreateToken(f.ctx, "org_a", "bob", "one more", 0)
	var bad *accounts.InvalidError
	if !errors.As(err, &bad) || bad.Field != "tokens" || !strings.Contains(bad.Msg, "revoke one") {
		t.Fatalf("token %d: %v, want an *InvalidError for tokens", accounts.MaxTokens+1, err)
	}
	if diff := cmp.Diff(before, f.creds("bob")); diff != "" {
		t.Errorf("credentials after the refused token (-before +after):\n%s", diff)
	}
	if _, err := f.svc.CreateToken(f.ctx, "org_a", "alice", "", 0); err != nil {
		t.Errorf("another user's first token: %v", err)
	}
	f.must(f.svc.RevokeToken(f.ctx, "org_a", "bob", accounts.TokenID(last.Credential)))
	_, err = f.svc.CreateToken(f.ctx, "org_a", "bob", "in its place", 0)
	f.must(err)
	f.clock.Advance(25 * time.Hour)
	if !soon.Credential.ExpiresAt.Before(f.clock.Now()) {
		t.Fatal("the test's clock did not pass the first token's expiry")
	}
	if _, err := f.svc.CreateToken(f.ctx, "org_a", "bob", "past the expired one", 0); err != nil {
		t.Errorf("with one token expired: %v", err)
	}
}

// TestRevokeToken: a token is revoked by its id, once; a prefix or
// another user's id is no token.
func TestRevokeToken(t *testing.T) {
	f := newFixture(t)
	tok, err := f.svc.CreateToken(f.ctx, "org_a", "bob", "ci", 0)
	f.must(err)
	id := accounts.TokenID(tok.Credential)
	for name, try := range map[string]func() error{
		"Prefix":      func() error { return f.svc.RevokeToken(f.ctx, "org_a", "bob", id[:8]) },
		"AnotherUser": func() error { return f.svc.RevokeToken(f.ctx, "org_a", "alice", id) },
	} {
		if err := try(); !errors.Is(err, accounts.ErrNoToken) {
			t.Errorf("%s: %v, want ErrNoToken", name, err)
		}
	}
	f.must(f.svc.RevokeToken(f.ctx, "org_a", "bob", id))
	if err := f.svc.RevokeToken(f.ctx, "org_a", "bob", id); !errors.Is(err, accounts.ErrNoToken) {
		t.Errorf("revoked twice: %v, want ErrNoToken", err)
	}
	if ts, err := f.svc.Tokens(f.ctx, "org_a", "bob"); err != nil || len(ts) != 0 {
		t.Errorf("tokens after revoking: %v, %v", ts, err)
	}
}
