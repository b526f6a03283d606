package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// This file checks disabled users and the last-admin rule: a disabled
// user holds no credentials and gets none, and no update or disable
// leaves an organisation without an enabled admin, however many callers
// race.

// userDisableCases checks DisableUser and the rules that depend on it.
func userDisableCases() []suiteCase {
	return []suiteCase{
		{"UserDisable", testUserDisable},
		{"UserDisableNotFound", testUserDisableNotFound},
		{"CredentialUnknownUser", testCredentialUnknownUser},
		{"LastAdminUpdate", testLastAdminUpdate},
		{"LastAdminDisable", testLastAdminDisable},
		{"LastAdminConcurrent", testLastAdminConcurrent},
		{"CredentialPutRacesDisable", testCredentialPutRacesDisable},
	}
}

// disable disables the user, failing the test on error.
func (f *fixture) disable(t *testing.T, org, id string, minute int) {
	t.Helper()
	if err := f.DisableUser(t.Context(), org, id, at(minute)); err != nil {
		t.Fatalf("DisableUser %s in %s: %v", id, org, err)
	}
}

// testUserDisable disables a member who holds credentials of every kind,
// one expired, and checks that the user reads back disabled and otherwise
// unchanged, holds no credential and gets none, that disabling again and
// updating change neither, and that other users' credentials stay,
// the same user ID's in another organisation included.
func testUserDisable(t *testing.T, f *fixture) {
	ctx := t.Context()
	org, other := f.createMembers(t, "org", "alice", "bob"), f.createMembers(t, "other-org", "alice")
	users := f.listUsers(t, org)
	var mine []store.Credential
	for _, kind := range credentialKinds {
		mine = append(mine, f.newCredential(kind, org, "alice", kind))
	}
	mine[0].ExpiresAt = at(15)
	bobs, elsewhere := f.newCredential(store.CredAPIToken, org, "bob", "bob"),
		f.newCredential(store.CredAPIToken, other, "alice", "elsewhere")
	f.putCredentials(t, append(mine, bobs, elsewhere)...)

	f.disable(t, org, "alice", 30)
	users[0].DisabledAt = at(30)
	wantUsers(t, "ListUsers after DisableUser", users, f.listUsers(t, org))
	wantUTC(t, "DisabledAt", f.getUser(t, org, "alice").DisabledAt)
	f.wantNoCredentials(t, "after DisableUser", org, "alice")
	late := f.newCredential(store.CredSession, org, "alice", "late")
	wantNotFound(t, "PutCredential for a disabled user", f.PutCredential(ctx, late))
	f.wantNoCredentials(t, "after a refused PutCredential", org, "alice")

	f.disable(t, org, "alice", 45)
	renamed := users[0]
	renamed.DisplayName, renamed.UpdatedAt = "Alice R.", at(50)
	_, err := f.ModifyUser(ctx, org, "alice", at(50), func(u *store.User) error {
		u.DisplayName, u.DisabledAt = "Alice R.", time.Time{}
		return nil
	})
	if err != nil {
		t.Fatalf("ModifyUser of a disabled user: %v", err)
	}
	wantUsers(t, "ListUsers after a second DisableUser and a ModifyUser",
		[]store.User{renamed, users[1]}, f.listUsers(t, org))
	wantNotFound(t, "PutCredential after ModifyUser", f.PutCredential(ctx, late))
	for _, c := range []store.Credential{bobs, elsewhere} {
		wantCredential(t, "another user's credential", c, f.lookup(t, c.Kind, c.Hash, at(20)))
	}
}

// credentialKinds are the kinds of credential a user may hold.
var credentialKinds = []string{store.CredAPIToken, store.CredSession, store.CredLoginLink}

// wantNoCredentials fails unless the user holds no credential of any kind.
func (f *fixture) wantNoCredentials(t *testing.T, what, org, user string) {
	t.Helper()
	for _, kind := range credentialKinds {
		if got := f.listCredentials(t, org, user, kind); len(got) != 0 {
			t.Errorf("%s: %s holds %s credentials %+v, want none", what, user, kind, got)
		}
	}
}

// testUserDisableNotFound checks that disabling a user who is not in the
// organisation is ErrNotFound and changes nobody, credentials included.
func testUserDisableNotFound(t *testing.T, f *fixture) {
	org, other := f.createMembers(t, "org", "alice"), f.createMembers(t, "other-org", "bob")
	token := f.newCredential(store.CredAPIToken, other, "bob", "token")
	f.putCredentials(t, token)
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
		wantNotFound(t, tc.name+": DisableUser", f.DisableUser(t.Context(), tc.org, tc.id, at(30)))
	}
	wantUsers(t, "users after refused disables", before,
		append(f.listUsers(t, org), f.listUsers(t, other)...))
	wantCredential(t, "bob's token after refused disables", token, f.lookup(t, token.Kind, token.Hash, at(20)))
}

// testCredentialUnknownUser checks that a credential for a user who is not
// in its organisation is ErrNotFound and is not stored.
func testCredentialUnknownUser(t *testing.T, f *fixture) {
	org, other := f.createMembers(t, "org", "alice"), f.createMembers(t, "other-org", "bob")
	tests := []struct{ name, org, user string }{
		{"MissingUser", org, "carol"},
		{"OtherOrgsUser", org, "bob"},
		{"UnknownOrg", f.id("unknown-org"), "alice"},
		{"CaseFolded", other, "BOB"},
	}
	for _, tc := range tests {
		c := f.newCredential(store.CredAPIToken, tc.org, tc.user, tc.name)
		wantNotFound(t, tc.name+": PutCredential", f.PutCredential(t.Context(), c))
		f.wantGone(t, tc.name+": LookupCredential", c.Kind, c.Hash, at(20))
	}
}

// adminCase is a last-admin check in an organisation of its own, beside
// another organisation with two enabled admins, one with target's ID:
// another organisation's admins never count.
type adminCase struct {
	name            string
	admins, members []string
	// disabled are disabled in order once every user exists.
	disabled []string
	target   string
	// role is what ModifyUser sets; DisableUser ignores it.
	role string
	// want is nil or the sentinel the call must answer.
	want error
}

// adminCases are the organisations the last-admin checks run in.
func adminCases() []adminCase {
	return []adminCase{
		{name: "OnlyAdmin", admins: []string{"a"}, members: []string{"m"},
			target: "a", role: store.RoleMember, want: store.ErrLastAdmin},
		{name: "OtherAdminDisabled", admins: []string{"a", "b"}, disabled: []string{"b"},
			target: "a", role: store.RoleMember, want: store.ErrLastAdmin},
		{name: "TwoAdmins", admins: []string{"a", "b"}, target: "a", role: store.RoleMember},
		{name: "DisabledAdmin", admins: []string{"a", "b"}, disabled: []string{"b"},
			target: "b", role: store.RoleMember},
		{name: "MemberBesideOnlyAdmin", admins: []string{"a"}, members: []string{"m"},
			target: "m", role: store.RoleMember},
		{name: "LastOfThree", admins: []string{"a", "b", "c"}, members: []string{"m"},
			disabled: []string{"m", "a", "c"}, target: "b", role: store.RoleMember, want: store.ErrLastAdmin},
	}
}

// setupAdmins creates tc's organisations and users, gives every user a
// session, disables tc.disabled, and returns the organisation's ID and its
// users as stored.
func (f *fixture) setupAdmins(t *testing.T, tc adminCase) (string, []store.User) {
	t.Helper()
	org := f.createMembers(t, "org-"+tc.name, tc.members...)
	elsewhere := f.createOrg(t, "other-org-"+tc.name)
	for _, u := range []store.User{newUser(elsewhere, tc.target), newUser(elsewhere, "x")} {
		u.Role = store.RoleAdmin
		f.createUsers(t, u)
	}
	for _, id := range tc.admins {
		u := newUser(org, id)
		u.Role = store.RoleAdmin
		f.createUsers(t, u)
	}
	for _, id := range slices.Concat(tc.admins, tc.members) {
		f.putCredentials(t, f.session(tc, org, id))
	}
	for _, id := range tc.disabled {
		f.disable(t, org, id, 25)
	}
	return org, f.listUsers(t, org)
}

// session returns the session setupAdmins gives the user id of tc.
func (f *fixture) session(tc adminCase, org, id string) store.Credential {
	return f.newCredential(store.CredSession, org, id, tc.name+"/session-"+id)
}

// testLastAdminUpdate edits each case's target, setting its role, and
// checks the answer, and that a refused edit changed nobody.
func testLastAdminUpdate(t *testing.T, f *fixture) {
	cases := adminCases()
	cases = append(cases,
		adminCase{name: "OnlyAdminStaysAdmin", admins: []string{"a"}, target: "a", role: store.RoleAdmin},
		adminCase{name: "PromoteMember", admins: []string{"a"}, members: []string{"m"},
			target: "m", role: store.RoleAdmin})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			org, want := f.setupAdmins(t, tc)
			i := slices.IndexFunc(want, func(u store.User) bool { return u.ID == tc.target })
			_, err := f.ModifyUser(t.Context(), org, tc.target, at(40), func(u *store.User) error {
				u.DisplayName, u.Role = "Changed", tc.role
				return nil
			})
			wantErrIs(t, "ModifyUser", err, tc.want)
			if tc.want == nil {
				want[i].DisplayName, want[i].Role, want[i].UpdatedAt = "Changed", tc.role, at(40)
			}
			wantUsers(t, "ListUsers after ModifyUser", want, f.listUsers(t, org))
		})
	}
}

// testLastAdminDisable disables each case's target and checks the answer,
// and that a refused disable changed nobody and kept the target's session.
func testLastAdminDisable(t *testing.T, f *fixture) {
	for _, tc := range adminCases() {
		t.Run(tc.name, func(t *testing.T) {
			org, want := f.setupAdmins(t, tc)
			i := slices.IndexFunc(want, func(u store.User) bool { return u.ID == tc.target })
			wasDisabled := !want[i].DisabledAt.IsZero()
			wantErrIs(t, "DisableUser", f.DisableUser(t.Context(), org, tc.target, at(40)), tc.want)
			if tc.want == nil && !wasDisabled {
				want[i].DisabledAt = at(40)
			}
			wantUsers(t, "ListUsers after DisableUser", want, f.listUsers(t, org))
			session := f.session(tc, org, tc.target)
			if tc.want != nil {
				wantCredential(t, "the session of a user not disabled", session,
					f.lookup(t, session.Kind, session.Hash, at(20)))
			} else {
				f.wantGone(t, "the session of a disabled user", session.Kind, session.Hash, at(20))
			}
		})
	}
}

// removeAdmin demotes or disables an admin.
type removeAdmin func(ctx context.Context, org, id string) error

// testLastAdminConcurrent removes the two admins of an organisation at
// once, by demoting or disabling them, round after round, and checks that
// exactly one call succeeds, the other is ErrLastAdmin, and one enabled
// admin is left.
func testLastAdminConcurrent(t *testing.T, f *fixture) {
	demote := func(ctx context.Context, org, id string) error {
		_, err := f.ModifyUser(ctx, org, id, at(40), func(u *store.User) error {
			u.Role = store.RoleMember
			return nil
		})
		return err
	}
	disable := func(ctx context.Context, org, id string) error { return f.DisableUser(ctx, org, id, at(40)) }
	variants := []struct {
		name string
		a, b removeAdmin
	}{
		{"DemoteBoth", demote, demote},
		{"DisableBoth", disable, disable},
		{"DemoteAndDisable", demote, disable},
	}
	const rounds = 10
	for _, v := range variants {
		for r := range rounds {
			tc := adminCase{name: fmt.Sprint(v.name, "-", r), admins: []string{"a", "b"}, target: "a"}
			org, _ := f.setupAdmins(t, tc)
			errA, errB := raceAdmins(t.Context(), org, v.a, v.b)
			ok := (errA == nil && errors.Is(errB, store.ErrLastAdmin)) ||
				(errB == nil && errors.Is(errA, store.ErrLastAdmin))
			if !ok {
				t.Errorf("%s round %d: errors %v and %v, want nil and store.ErrLastAdmin", v.name, r, errA, errB)
			}
			if n := enabledAdmins(f.listUsers(t, org)); n != 1 {
				t.Errorf("%s round %d: %d enabled admins left, want 1", v.name, r, n)
			}
		}
	}
}

// raceAdmins removes the admins "a" and "b" of org at once, from two
// goroutines released together to overlap as much as they can.
func raceAdmins(ctx context.Context, org string, a, b removeAdmin) (errA, errB error) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { <-start; errA = a(ctx, org, "a") })
	wg.Go(func() { <-start; errB = b(ctx, org, "b") })
	close(start)
	wg.Wait()
	return errA, errB
}

// enabledAdmins counts the enabled admins among users.
func enabledAdmins(users []store.User) int {
	n := 0
	for _, u := range users {
		if u.Role == store.RoleAdmin && u.DisabledAt.IsZero() {
			n++
		}
	}
	return n
}

// testCredentialPutRacesDisable starts PutCredential and DisableUser
// together, round after round, and checks that however they interleave
// the disabled user is left holding no credential: a credential put
// while the disable runs is either refused or removed with the others.
func testCredentialPutRacesDisable(t *testing.T, f *fixture) {
	for round := range 8 {
		org := f.createMembers(t, fmt.Sprintf("race-%d", round), "alice")
		c := f.newCredential(store.CredAPIToken, org, "alice", fmt.Sprintf("race-%d", round))
		var wg sync.WaitGroup
		var putErr, disableErr error
		wg.Go(func() { putErr = f.PutCredential(t.Context(), c) })
		wg.Go(func() { disableErr = f.DisableUser(t.Context(), org, "alice", at(30)) })
		wg.Wait()
		if disableErr != nil {
			t.Fatalf("round %d: DisableUser: %v", round, disableErr)
		}
		if putErr != nil && !errors.Is(putErr, store.ErrNotFound) {
			t.Fatalf("round %d: PutCredential: %v, want nil or ErrNotFound", round, putErr)
		}
		if f.getUser(t, org, "alice").DisabledAt.IsZero() {
			t.Fatalf("round %d: alice is not disabled", round)
		}
		f.wantGone(t, fmt.Sprintf("round %d: the raced credential", round), c.Kind, c.Hash, at(20))
		held, err := f.ListCredentials(t.Context(), org, "alice", store.CredAPIToken)
		if err != nil || len(held) != 0 {
			t.Fatalf("round %d: alice holds %d credentials (%v), want none", round, len(held), err)
		}
	}
}
