package storetest

import (
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks CreateUser with the user's first credentials: the
// user and every credential are stored together or not at all.

// userCreateCases checks CreateUser's credentials.
func userCreateCases() []suiteCase {
	return []suiteCase{
		{"UserCreateWithCredentials", testUserCreateWithCredentials},
		{"UserCreateCredentialTaken", testUserCreateCredentialTaken},
		{"UserCreateCredentialRefused", testUserCreateCredentialRefused},
	}
}

// testUserCreateWithCredentials creates a user with a login link and a
// session and checks that both work and belong to them.
func testUserCreateWithCredentials(t *testing.T, f *fixture) {
	org := f.createOrg(t, "org")
	u := newUser(org, "alice")
	link, session := f.newCredential(store.CredLoginLink, org, "alice", "link"),
		f.newCredential(store.CredSession, org, "alice", "session")
	if err := f.CreateUser(t.Context(), u, link, session); err != nil {
		t.Fatalf("CreateUser with credentials: %v", err)
	}
	if d := diff(u, f.getUser(t, org, "alice")); d != "" {
		t.Errorf("GetUser (-want +got):\n%s", d)
	}
	for _, c := range []store.Credential{link, session} {
		wantCredential(t, c.Kind+" given to CreateUser", c, f.lookup(t, c.Kind, c.Hash, at(20)))
	}
}

// testUserCreateCredentialTaken creates a user whose credential's hash is
// stored already, for another user or given twice, and checks that it is
// ErrExists and stores neither the user nor any of their credentials,
// leaving the stored credential as it was.
func testUserCreateCredentialTaken(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "mallory")
	held := f.newCredential(store.CredLoginLink, org, "mallory", "taken")
	f.putCredentials(t, held)
	fresh := func(id string) store.Credential { return f.newCredential(store.CredSession, org, id, id+"/fresh") }
	taken := func(id string) store.Credential {
		c := f.newCredential(store.CredLoginLink, org, id, "taken")
		c.CreatedAt = at(12)
		return c
	}
	tests := []struct {
		name  string
		creds func(id string) []store.Credential
	}{
		{"HashOfAnotherUser", func(id string) []store.Credential { return []store.Credential{taken(id)} }},
		{"AfterAFreshOne", func(id string) []store.Credential { return []store.Credential{fresh(id), taken(id)} }},
		{"GivenTwice", func(id string) []store.Credential { return []store.Credential{fresh(id), fresh(id)} }},
	}
	for _, tc := range tests {
		creds := tc.creds(tc.name)
		wantErrIs(t, tc.name+": CreateUser", f.CreateUser(t.Context(), newUser(org, tc.name), creds...), store.ErrExists)
		_, err := f.GetUser(t.Context(), org, tc.name)
		wantNotFound(t, tc.name+": GetUser after a refused CreateUser", err)
		f.wantNoCredentials(t, tc.name+": after a refused CreateUser", org, tc.name)
	}
	wantCredential(t, "the credential whose hash was taken", held, f.lookup(t, held.Kind, held.Hash, at(20)))
	wantUsers(t, "ListUsers after refused CreateUser calls", []store.User{newUser(org, "mallory")}, f.listUsers(t, org))
}

// testUserCreateCredentialRefused checks that a credential CreateUser
// cannot give the new user (another user's, a disabled user's, a
// malformed one) is an error, and that a missing organisation is
// ErrNotFound, each storing nothing.
func testUserCreateCredentialRefused(t *testing.T, f *fixture) {
	org, other := f.createMembers(t, "org", "mallory"), f.createOrg(t, "other-org")
	disabled := newUser(org, "disabled")
	disabled.DisabledAt = at(15)
	malformed := f.newCredential(store.CredAPIToken, org, "malformed", "malformed")
	malformed.Hash = "not-a-hash"
	tests := []struct {
		name string
		u    store.User
		c    store.Credential
	}{
		{"OtherUsers", newUser(org, "alice"), f.newCredential(store.CredSession, org, "mallory", "mallory")},
		{"OtherOrgs", newUser(org, "bob"), f.newCredential(store.CredSession, other, "bob", "bob")},
		{"DisabledUser", disabled, f.newCredential(store.CredSession, org, "disabled", "disabled")},
		{"Malformed", newUser(org, "malformed"), malformed},
	}
	for _, tc := range tests {
		if err := f.CreateUser(t.Context(), tc.u, tc.c); err == nil {
			t.Errorf("%s: CreateUser succeeded, want an error", tc.name)
		}
		if tc.c.Hash != malformed.Hash {
			f.wantGone(t, tc.name+": the credential", tc.c.Kind, tc.c.Hash, at(20))
		}
	}
	missing := newUser(f.id("missing-org"), "carol")
	err := f.CreateUser(t.Context(), missing, f.newCredential(store.CredSession, missing.OrgID, "carol", "carol"))
	wantNotFound(t, "CreateUser in a missing organisation", err)
	f.wantGone(t, "the credential of a user in a missing organisation", store.CredSession, f.hashOf("carol"), at(20))
	wantUsers(t, "ListUsers after refused CreateUser calls", []store.User{newUser(org, "mallory")}, f.listUsers(t, org))
	if got := f.listUsers(t, other); len(got) != 0 {
		t.Errorf("refused CreateUser calls stored %+v in the other organisation", got)
	}
}
