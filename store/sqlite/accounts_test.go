package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// testSecret stands for a plaintext credential passed where its hash belongs.
const testSecret = "qv_live_8f2a9c41d7e6b053"

// testHash is a well-formed credential hash.
var testHash = strings.Repeat("0123456789abcdef", 4)

// TestAccountRefusals checks the arguments outside the contract are
// refused and write nothing, and that a refused credential's error never
// quotes what it was given (it may be the secret).
func TestAccountRefusals(t *testing.T) {
	s := openTest(t, t.TempDir())
	if err := s.CreateOrg(t.Context(), store.Org{ID: "org"}); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	now := time.Now()
	cred := func(kind, testHash, org, user string) func(context.Context) error {
		return func(ctx context.Context) error {
			return s.PutCredential(ctx, store.Credential{Kind: kind, Hash: testHash, OrgID: org, UserID: user, CreatedAt: now})
		}
	}
	tests := []struct {
		name string
		call func(context.Context) error
	}{
		{"EmptyOrgID", func(ctx context.Context) error { return s.CreateOrg(ctx, store.Org{CreatedAt: now}) }},
		{"EmptyUserID", func(ctx context.Context) error {
			return s.CreateUser(ctx, store.User{OrgID: "org", Role: store.RoleMember, CreatedAt: now})
		}},
		{"UserWithSecret", func(ctx context.Context) error {
			u := store.User{OrgID: "org", ID: "user", Role: store.RoleMember, CreatedAt: now}
			return s.CreateUser(ctx, u, store.Credential{Kind: store.CredLoginLink, Hash: testSecret, OrgID: "org", UserID: "user"})
		}},
		{"EmptyKind", cred("", testHash, "org", "user")},
		{"UnknownKind", cred("password", testHash, "org", "user")},
		{"Secret", cred(store.CredAPIToken, testSecret, "org", "user")},
		{"UpperCaseHash", cred(store.CredAPIToken, strings.ToUpper(testHash), "org", "user")},
		{"ShortHash", cred(store.CredAPIToken, testHash[1:], "org", "user")},
		{"LongHash", cred(store.CredAPIToken, testHash+"0", "org", "user")},
		{"NotHex", cred(store.CredAPIToken, "g"+testHash[1:], "org", "user")},
		{"EmptyHash", cred(store.CredAPIToken, "", "org", "user")},
		{"CredentialEmptyOrg", cred(store.CredAPIToken, testHash, "", "user")},
		{"CredentialEmptyUser", cred(store.CredAPIToken, testHash, "org", "")},
		{"EmptyAgentName", func(ctx context.Context) error {
			return s.PutAgent(ctx, store.StoredAgent{OrgID: "org", Definition: []byte("name: x\n")})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t.Context())
			if err == nil {
				t.Fatalf("%s succeeded, want an error", tc.name)
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testHash[:16]) {
				t.Errorf("error %q quotes the credential", err)
			}
			wantNoAccounts(t, s)
		})
	}
}

// wantNoAccounts fails unless the store holds the organisation "org" and
// nothing else of the Accounts and Agents repositories.
func wantNoAccounts(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	if n, err := s.CountOrgs(ctx); n != 1 || err != nil {
		t.Errorf("CountOrgs = %d, %v; want 1, nil", n, err)
	}
	if us, err := s.ListUsers(ctx, "org"); len(us) != 0 || err != nil {
		t.Errorf("ListUsers = %+v, %v; want none", us, err)
	}
	for _, kind := range []string{"", "password", store.CredAPIToken} {
		for _, user := range []string{"", "user"} {
			if cs, err := s.ListCredentials(ctx, "org", user, kind); len(cs) != 0 || err != nil {
				t.Errorf("ListCredentials(%q, %q) = %+v, %v; want none", user, kind, cs, err)
			}
		}
	}
	if as, err := s.ListAgents(ctx, "org"); len(as) != 0 || err != nil {
		t.Errorf("ListAgents = %+v, %v; want none", as, err)
	}
}

// TestAccountSchemaChecks checks the schema's backstops for the values the
// store refuses, for a write that skipped the store's checks.
func TestAccountSchemaChecks(t *testing.T) {
	s := openTest(t, t.TempDir())
	const cred = `INSERT INTO credentials VALUES (?, ?, 'org', 'u', '', '', '', NULL)`
	tests := []struct {
		name    string
		q       string
		args    []any
		wantErr bool
	}{
		{"Org", `INSERT INTO orgs VALUES ('org', 'Org', '')`, nil, false},
		{"EmptyOrgID", `INSERT INTO orgs VALUES ('', 'Org', '')`, nil, true},
		{"User", `INSERT INTO users VALUES ('org', 'u1', '', '', '', 'admin', '', '', NULL)`, nil, false},
		{"Member", `INSERT INTO users VALUES ('org', 'u2', '', '', '', 'member', '', '', NULL)`, nil, false},
		{"BadRole", `INSERT INTO users VALUES ('org', 'u3', '', '', '', 'owner', '', '', NULL)`, nil, true},
		{"UserTwice", `INSERT INTO users VALUES ('org', 'u1', '', '', '', 'admin', '', '', NULL)`, nil, true},
		{"UserOfNoOrg", `INSERT INTO users VALUES ('missing', 'u4', '', '', '', 'admin', '', '', NULL)`, nil, true},
		{"EmptyUserID", `INSERT INTO users VALUES ('org', '', '', '', '', 'admin', '', '', NULL)`, nil, true},
		{"Credential", cred, []any{store.CredSession, testHash}, false},
		{"SameHashOtherKind", cred, []any{store.CredLoginLink, testHash}, false},
		{"CredentialTwice", cred, []any{store.CredSession, testHash}, true},
		{"BadKind", cred, []any{"password", strings.Repeat("1", 64)}, true},
		{"Secret", cred, []any{store.CredAPIToken, testSecret}, true},
		{"UpperCaseHash", cred, []any{store.CredAPIToken, strings.ToUpper(testHash)}, true},
		{"NotHex", cred, []any{store.CredAPIToken, "g" + testHash[1:]}, true},
		{"Agent", `INSERT INTO agents VALUES ('org', 'a', x'', '', '')`, nil, false},
		{"EmptyAgentName", `INSERT INTO agents VALUES ('org', '', x'', '', '')`, nil, true},
		{"NullDefinition", `INSERT INTO agents VALUES ('org', 'b', NULL, '', '')`, nil, true},
	}
	for _, tc := range tests {
		_, err := s.writer.ExecContext(t.Context(), tc.q, tc.args...)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
}

// TestDisableUserZeroTime checks that a zero time, which would be stored
// as "active", is refused and neither disables the user nor deletes a
// credential.
func TestDisableUserZeroTime(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := t.Context()
	u := store.User{OrgID: "org", ID: "u", Role: store.RoleMember}
	c := store.Credential{Kind: store.CredAPIToken, Hash: testHash, OrgID: "org", UserID: "u"}
	if err := s.CreateOrg(ctx, store.Org{ID: "org"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCredential(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s.DisableUser(ctx, "org", "u", time.Time{}); err == nil {
		t.Errorf("DisableUser at the zero time succeeded, want an error")
	}
	if got, err := s.GetUser(ctx, "org", "u"); err != nil || !got.DisabledAt.IsZero() {
		t.Errorf("GetUser = %+v, %v; want the user active", got, err)
	}
	if _, err := s.LookupCredential(ctx, c.Kind, c.Hash, time.Now()); err != nil {
		t.Errorf("LookupCredential after a refused DisableUser: %v", err)
	}
}
