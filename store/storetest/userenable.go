package storetest

import (
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// This file checks EnableUser: the way back from DisableUser, which gives
// a user neither their old credentials nor anyone else's changes.

// userEnableCases checks EnableUser.
func userEnableCases() []suiteCase {
	return []suiteCase{
		{"UserEnable", testUserEnable},
		{"UserEnableIdempotent", testUserEnableIdempotent},
		{"UserEnableNotFound", testUserEnableNotFound},
		{"UserEnableCredential", testUserEnableCredential},
		{"UserEnableAdmin", testUserEnableAdmin},
	}
}

// enable enables the user, failing the test on error.
func (f *fixture) enable(t *testing.T, org, id string, minute int) {
	t.Helper()
	if err := f.EnableUser(t.Context(), org, id, at(minute)); err != nil {
		t.Fatalf("EnableUser %s in %s: %v", id, org, err)
	}
}

// testUserEnable disables and enables a member who held credentials and
// checks that the user reads back enabled with UpdatedAt stamped and
// otherwise unchanged, that the credentials stay deleted, and that
// neither another user nor the same user ID in another organisation
// changed.
func testUserEnable(t *testing.T, f *fixture) {
	org, other := f.createMembers(t, "org", "alice", "bob"), f.createMembers(t, "other-org", "alice")
	var held []store.Credential
	for _, kind := range credentialKinds {
		held = append(held, f.newCredential(kind, org, "alice", kind))
	}
	f.putCredentials(t, held...)
	f.disable(t, org, "alice", 30)
	f.disable(t, other, "alice", 30)
	users, others := f.listUsers(t, org), f.listUsers(t, other)

	f.enable(t, org, "alice", 40)
	users[0].DisabledAt, users[0].UpdatedAt = time.Time{}, at(40)
	wantUsers(t, "ListUsers after EnableUser", users, f.listUsers(t, org))
	wantUTC(t, "UpdatedAt after EnableUser", f.getUser(t, org, "alice").UpdatedAt)
	wantUsers(t, "the other organisation's users after EnableUser", others, f.listUsers(t, other))
	f.wantNoCredentials(t, "after EnableUser", org, "alice")
	for _, c := range held {
		f.wantGone(t, "a credential deleted by DisableUser", c.Kind, c.Hash, at(20))
	}
}

// testUserEnableIdempotent checks that enabling a user who is enabled,
// never disabled or enabled already, changes nothing, UpdatedAt included,
// and is no error.
func testUserEnableIdempotent(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "alice", "bob")
	f.disable(t, org, "bob", 30)
	f.enable(t, org, "bob", 40)
	want := f.listUsers(t, org)
	tests := []struct {
		name, id string
	}{
		{"NeverDisabled", "alice"},
		{"EnabledAlready", "bob"},
	}
	for _, tc := range tests {
		wantErrIs(t, tc.name+": EnableUser", f.EnableUser(t.Context(), org, tc.id, at(50)), nil)
	}
	wantUsers(t, "ListUsers after enabling enabled users", want, f.listUsers(t, org))
}

// testUserEnableNotFound checks that enabling a user who is not in the
// organisation is ErrNotFound and changes nobody, a disabled user of that
// ID in another organisation included.
func testUserEnableNotFound(t *testing.T, f *fixture) {
	org, other := f.createMembers(t, "org", "alice"), f.createMembers(t, "other-org", "bob")
	f.disable(t, org, "alice", 30)
	f.disable(t, other, "bob", 30)
	before := append(f.listUsers(t, org), f.listUsers(t, other)...)
	tests := []struct{ name, org, id string }{
		{"MissingID", org, "carol"},
		{"OtherOrgsUser", org, "bob"},
		{"UnknownOrg", f.id("unknown-org"), "bob"},
		{"EmptyOrg", "", "bob"},
		{"EmptyID", org, ""},
		{"CaseFolded", other, "BOB"},
	}
	for _, tc := range tests {
		wantNotFound(t, tc.name+": EnableUser", f.EnableUser(t.Context(), tc.org, tc.id, at(40)))
	}
	wantUsers(t, "users after refused enables", before,
		append(f.listUsers(t, org), f.listUsers(t, other)...))
}

// testUserEnableCredential checks that a user enabled again gets
// credentials again, of every kind.
func testUserEnableCredential(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "alice")
	f.disable(t, org, "alice", 30)
	f.enable(t, org, "alice", 40)
	for _, kind := range credentialKinds {
		c := f.newCredential(kind, org, "alice", "after-enable-"+kind)
		f.putCredentials(t, c)
		wantCredential(t, kind+" put after EnableUser", c, f.lookup(t, c.Kind, c.Hash, at(20)))
	}
}

// testUserEnableAdmin checks that an admin enabled again counts for the
// last-admin rule: the other admin may then be disabled.
func testUserEnableAdmin(t *testing.T, f *fixture) {
	org := f.createOrg(t, "org")
	for _, id := range []string{"a", "b"} {
		u := newUser(org, id)
		u.Role = store.RoleAdmin
		f.createUsers(t, u)
	}
	f.disable(t, org, "b", 30)
	wantErrIs(t, "DisableUser of the only enabled admin",
		f.DisableUser(t.Context(), org, "a", at(35)), store.ErrLastAdmin)
	f.enable(t, org, "b", 40)
	wantErrIs(t, "DisableUser beside an admin enabled again",
		f.DisableUser(t.Context(), org, "a", at(45)), nil)
	if n := enabledAdmins(f.listUsers(t, org)); n != 1 {
		t.Errorf("%d enabled admins left, want 1", n)
	}
}
