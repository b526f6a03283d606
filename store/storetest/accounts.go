package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks organisations and their users: an ID is taken once, a
// user belongs to an existing organisation, holds one of the two roles,
// and is found only in its own organisation.

// accountCases checks the Accounts repository.
func accountCases() []suiteCase {
	return []suiteCase{
		{"OrgRoundTrip", testOrgRoundTrip},
		{"OrgExists", testOrgExists},
		{"OrgNotFound", testOrgNotFound},
		{"UserRoundTrip", testUserRoundTrip},
		{"UserCreateRefused", testUserCreateRefused},
		{"UserBadRole", testUserBadRole},
		{"UserNotFound", testUserNotFound},
		{"UserList", testUserList},
		{"UserUpdate", testUserUpdate},
		{"UserUpdateRefused", testUserUpdateRefused},
		{"CredentialRoundTrip", testCredentialRoundTrip},
		{"CredentialExists", testCredentialExists},
		{"CredentialExpiry", testCredentialExpiry},
		{"CredentialConsume", testCredentialConsume},
		{"CredentialConsumeConcurrent", testCredentialConsumeConcurrent},
		{"CredentialDelete", testCredentialDelete},
		{"CredentialList", testCredentialList},
	}
}

// accountAloneCases are the Accounts checks that count or delete rows in
// every organisation, so must run while nothing else writes.
func accountAloneCases() []suiteCase {
	return []suiteCase{
		{"CountOrgs", testCountOrgs},
		{"DeleteExpiredCredentials", testDeleteExpiredCredentials},
	}
}

// newOrg returns an organisation with every field set, its ID unique to
// the run and subtest.
func (f *fixture) newOrg(name string) store.Org {
	return store.Org{ID: f.id(name), Name: "Zürich «" + name + "» Ops", CreatedAt: at(5)}
}

// createOrgs creates every organisation, failing the test on error.
func (f *fixture) createOrgs(t *testing.T, orgs ...store.Org) {
	t.Helper()
	for _, o := range orgs {
		if err := f.CreateOrg(t.Context(), o); err != nil {
			t.Fatalf("CreateOrg %s: %v", o.ID, err)
		}
	}
}

// getOrg returns GetOrg's answer, failing the test on error.
func (f *fixture) getOrg(t *testing.T, id string) store.Org {
	t.Helper()
	got, err := f.GetOrg(t.Context(), id)
	if err != nil {
		t.Fatalf("GetOrg %s: %v", id, err)
	}
	return got
}

// countOrgs returns CountOrgs' answer, failing the test on error.
func (f *fixture) countOrgs(t *testing.T) int {
	t.Helper()
	n, err := f.CountOrgs(t.Context())
	if err != nil {
		t.Fatalf("CountOrgs: %v", err)
	}
	return n
}

// newUser returns a member with every field set, id in the organisation
// orgID (which the caller creates).
func newUser(orgID, id string) store.User {
	return store.User{
		ID:          id,
		OrgID:       orgID,
		DisplayName: "Zoë O'Brien-" + id,
		Department:  "R&D / Ops",
		Timezone:    "Asia/Kolkata",
		Role:        store.RoleMember,
		CreatedAt:   at(10),
		UpdatedAt:   at(20),
	}
}

// createUsers creates every user, failing the test on error.
func (f *fixture) createUsers(t *testing.T, us ...store.User) {
	t.Helper()
	for _, u := range us {
		if err := f.CreateUser(t.Context(), u); err != nil {
			t.Fatalf("CreateUser %s in %s: %v", u.ID, u.OrgID, err)
		}
	}
}

// createMembers creates the organisation f.newOrg(org) and a member of it
// for each ID, and returns the organisation's ID.
func (f *fixture) createMembers(t *testing.T, org string, ids ...string) string {
	t.Helper()
	o := f.newOrg(org)
	f.createOrgs(t, o)
	for _, id := range ids {
		f.createUsers(t, newUser(o.ID, id))
	}
	return o.ID
}

// getUser returns GetUser's answer, failing the test on error.
func (f *fixture) getUser(t *testing.T, org, id string) store.User {
	t.Helper()
	got, err := f.GetUser(t.Context(), org, id)
	if err != nil {
		t.Fatalf("GetUser %s in %s: %v", id, org, err)
	}
	return got
}

// listUsers returns ListUsers' answer, failing the test on error.
func (f *fixture) listUsers(t *testing.T, org string) []store.User {
	t.Helper()
	got, err := f.ListUsers(t.Context(), org)
	if err != nil {
		t.Fatalf("ListUsers: %v", err)
	}
	return got
}

// wantUsers fails unless got is want, in order; nil and empty lists are
// equal.
func wantUsers(t *testing.T, what string, want, got []store.User) {
	t.Helper()
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

func testOrgRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Org)
	}{
		{"AllFields", func(*store.Org) {}},
		{"Unicode", func(o *store.Org) { o.Name = "Suche «ß» 'q\"\n🙂" }},
		{"ZeroFields", func(o *store.Org) { *o = store.Org{ID: o.ID} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newOrg("org-" + tc.name)
			tc.edit(&want)
			f.createOrgs(t, want)
			got := f.getOrg(t, want.ID)
			if d := diff(want, got); d != "" {
				t.Errorf("GetOrg mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "CreatedAt", got.CreatedAt)
		})
	}
}

// testOrgExists creates an organisation twice and checks that the second
// is ErrExists and leaves the first as it was.
func testOrgExists(t *testing.T, f *fixture) {
	first := f.newOrg("org")
	f.createOrgs(t, first)
	second := store.Org{ID: first.ID, Name: "Impostor", CreatedAt: at(40)}
	wantErrIs(t, "second CreateOrg", f.CreateOrg(t.Context(), second), store.ErrExists)
	if d := diff(first, f.getOrg(t, first.ID)); d != "" {
		t.Errorf("a refused CreateOrg changed the organisation (-want +got):\n%s", d)
	}
}

// testOrgNotFound checks that GetOrg finds an organisation by its exact
// ID only, and that the error reveals nothing.
func testOrgNotFound(t *testing.T, f *fixture) {
	o := f.newOrg("org")
	f.createOrgs(t, o)
	for _, id := range []string{f.id("missing"), strings.ToUpper(o.ID), o.ID + " ", o.Name, ""} {
		got, err := f.GetOrg(t.Context(), id)
		wantNotFound(t, "GetOrg("+id+")", err)
		if d := diff(store.Org{}, got); d != "" {
			t.Errorf("GetOrg(%q) revealed a record (-want +got):\n%s", id, d)
		}
	}
}

// testCountOrgs runs alone: it counts organisations before and after
// creating its own, a refused duplicate included.
func testCountOrgs(t *testing.T, f *fixture) {
	before := f.countOrgs(t)
	a := f.newOrg("a")
	f.createOrgs(t, a, f.newOrg("b"), f.newOrg("c"))
	wantErrIs(t, "duplicate CreateOrg", f.CreateOrg(t.Context(), a), store.ErrExists)
	if got, want := f.countOrgs(t), before+3; got != want {
		t.Errorf("CountOrgs after creating 3 organisations = %d, want %d (%d before)", got, want, before)
	}
}

func testUserRoundTrip(t *testing.T, f *fixture) {
	org := f.newOrg("org")
	f.createOrgs(t, org)
	tests := []struct {
		name string
		edit func(*store.User)
	}{
		{"Member", func(*store.User) {}},
		{"Admin", func(u *store.User) { u.Role = store.RoleAdmin }},
		{"NoTimezone", func(u *store.User) { u.Timezone = "" }},
		{"Unicode", func(u *store.User) { u.DisplayName, u.Department = "Ana «ß» 'q\"\n🙂", "財務" }},
		{"ZeroFields", func(u *store.User) { *u = store.User{ID: u.ID, OrgID: u.OrgID, Role: store.RoleMember} }},
		{"Disabled", func(u *store.User) { u.DisabledAt = at(15) }},
		{"DisabledAdmin", func(u *store.User) { u.Role, u.DisabledAt = store.RoleAdmin, at(16) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := newUser(org.ID, "user-"+tc.name)
			tc.edit(&want)
			f.createUsers(t, want)
			got := f.getUser(t, org.ID, want.ID)
			if d := diff(want, got); d != "" {
				t.Errorf("GetUser mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "CreatedAt, UpdatedAt, DisabledAt", got.CreatedAt, got.UpdatedAt, got.DisabledAt)
			listed := f.listUsers(t, org.ID)
			i := slices.IndexFunc(listed, func(u store.User) bool { return u.ID == want.ID })
			if i < 0 {
				t.Fatalf("ListUsers = %+v, want %s among them", listed, want.ID)
			}
			if d := diff(want, listed[i]); d != "" {
				t.Errorf("ListUsers mismatch (-want +got):\n%s", d)
			}
		})
	}
}

// testUserCreateRefused checks that a user in no existing organisation is
// ErrNotFound, a taken ID ErrExists leaving the first user as it was, and
// that the same ID in another organisation is a different user.
func testUserCreateRefused(t *testing.T, f *fixture) {
	org, other := f.newOrg("org"), f.newOrg("other-org")
	f.createOrgs(t, org, other)
	first := newUser(org.ID, "alice")
	f.createUsers(t, first)
	dup := newUser(org.ID, "alice")
	dup.DisplayName, dup.Role, dup.CreatedAt = "Impostor", store.RoleAdmin, at(40)
	tests := []struct {
		name string
		u    store.User
		want error
	}{
		{"MissingOrg", newUser(f.id("missing-org"), "bob"), store.ErrNotFound},
		{"EmptyOrg", newUser("", "bob"), store.ErrNotFound},
		{"Taken", dup, store.ErrExists},
		{"SameIDInOtherOrg", newUser(other.ID, "alice"), nil},
	}
	for _, tc := range tests {
		wantErrIs(t, tc.name+": CreateUser", f.CreateUser(t.Context(), tc.u), tc.want)
	}
	wantUsers(t, "ListUsers", []store.User{first}, f.listUsers(t, org.ID))
	wantUsers(t, "ListUsers of the other organisation", []store.User{newUser(other.ID, "alice")},
		f.listUsers(t, other.ID))
	for _, id := range []string{f.id("missing-org"), ""} {
		if got := f.listUsers(t, id); len(got) != 0 {
			t.Errorf("a refused CreateUser stored %+v in %q", got, id)
		}
	}
}

// badRoles are roles a store must refuse.
var badRoles = []string{"", "Admin", "MEMBER", " member", "member ", "owner", "admin,member"}

// testUserBadRole checks that a role other than admin and member is
// refused and stores nothing.
func testUserBadRole(t *testing.T, f *fixture) {
	org := f.newOrg("org")
	f.createOrgs(t, org)
	for _, role := range badRoles {
		u := newUser(org.ID, "user")
		u.Role = role
		if err := f.CreateUser(t.Context(), u); err == nil {
			t.Errorf("CreateUser with role %q succeeded, want an error", role)
		}
	}
	if got := f.listUsers(t, org.ID); len(got) != 0 {
		t.Errorf("refused CreateUser calls stored %+v", got)
	}
}

// testUserNotFound checks that a user is reachable only from its own
// organisation, another organisation's user ID never, and that the error
// reveals nothing.
func testUserNotFound(t *testing.T, f *fixture) {
	org, other := f.newOrg("org"), f.newOrg("other-org")
	f.createOrgs(t, org, other)
	mine, theirs := newUser(org.ID, "alice"), newUser(other.ID, "bob")
	f.createUsers(t, mine, theirs)
	tests := []struct{ name, org, id string }{
		{"MissingID", org.ID, "carol"},
		{"OtherOrgsUser", org.ID, theirs.ID},
		{"FromOtherOrg", other.ID, mine.ID},
		{"UnknownOrg", f.id("unknown-org"), mine.ID},
		{"EmptyOrg", "", mine.ID},
		{"CaseFolded", org.ID, strings.ToUpper(mine.ID)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.GetUser(t.Context(), tc.org, tc.id)
			wantNotFound(t, "GetUser", err)
			if d := diff(store.User{}, got); d != "" {
				t.Errorf("GetUser revealed a record (-want +got):\n%s", d)
			}
		})
	}
}

// testUserList creates users out of ID order in two organisations and
// checks that each list is by ID, byte by byte, and holds only its
// organisation's users.
func testUserList(t *testing.T, f *fixture) {
	org, other := f.newOrg("org"), f.newOrg("other-org")
	f.createOrgs(t, org, other)
	var mine []store.User
	for i, id := range []string{"mallory", "Zed", "alice", "bob", "alice2", "ärger"} {
		u := newUser(org.ID, id)
		u.CreatedAt = at(30 - i) // neither ID nor creation order
		mine = append(mine, u)
	}
	theirs := newUser(other.ID, "aaron")
	f.createUsers(t, append(mine[:3:3], theirs)...)
	f.createUsers(t, mine[3:]...)
	slices.SortFunc(mine, func(a, b store.User) int { return strings.Compare(a.ID, b.ID) })
	tests := []struct {
		name string
		org  string
		want []store.User
	}{
		{"Mine", org.ID, mine},
		{"OtherOrg", other.ID, []store.User{theirs}},
		{"UnknownOrg", f.id("unknown-org"), nil},
		{"EmptyOrg", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantUsers(t, "ListUsers", tc.want, f.listUsers(t, tc.org))
		})
	}
}

// testUserUpdate edits a user in turn with ModifyUser and checks that
// each edit replaces the four fields and stamps UpdatedAt, keeps every
// other field whatever change sets, returns the user as stored, and
// leaves the same ID in another organisation alone. Another admin lets
// the user be demoted.
func testUserUpdate(t *testing.T, f *fixture) {
	org, other := f.newOrg("org"), f.newOrg("other-org")
	f.createOrgs(t, org, other)
	want, theirs, root := newUser(org.ID, "alice"), newUser(other.ID, "alice"), newUser(org.ID, "root")
	root.Role = store.RoleAdmin
	f.createUsers(t, want, theirs, root)
	steps := []struct {
		name string
		edit func(*store.User)
	}{
		{"Promote", func(u *store.User) { u.Role = store.RoleAdmin }},
		{"Rename", func(u *store.User) { u.DisplayName, u.Department = "Alice «B»", "財務" }},
		{"Move", func(u *store.User) { u.Timezone = "America/St_Johns" }},
		{"ClearAndDemote", func(u *store.User) {
			u.DisplayName, u.Department, u.Timezone, u.Role = "", "", "", store.RoleMember
		}},
	}
	for i, st := range steps {
		st.edit(&want)
		want.UpdatedAt = at(30 + i)
		got, err := f.ModifyUser(t.Context(), org.ID, want.ID, at(30+i), func(u *store.User) error {
			st.edit(u)
			// Not ModifyUser's to change: each must be ignored.
			u.ID, u.OrgID, u.CreatedAt, u.UpdatedAt, u.DisabledAt = "mallory", other.ID, at(50), at(52), at(51)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: ModifyUser: %v", st.name, err)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("%s: ModifyUser returned (-want +got):\n%s", st.name, d)
		}
		stored := f.getUser(t, org.ID, want.ID)
		if d := diff(want, stored); d != "" {
			t.Errorf("%s: GetUser after ModifyUser (-want +got):\n%s", st.name, d)
		}
		wantUTC(t, st.name+": CreatedAt, UpdatedAt", got.CreatedAt, got.UpdatedAt, stored.UpdatedAt)
	}
	if d := diff(theirs, f.getUser(t, other.ID, theirs.ID)); d != "" {
		t.Errorf("the other organisation's user changed (-want +got):\n%s", d)
	}
	_, err := f.GetUser(t.Context(), org.ID, "mallory")
	wantNotFound(t, "GetUser of the ID a change set", err)
}

// testUserUpdateRefused checks that modifying a user who is not in the
// organisation is ErrNotFound without calling change, a bad role an
// error, and that neither changes or creates anyone.
func testUserUpdateRefused(t *testing.T, f *fixture) {
	org, other := f.newOrg("org"), f.newOrg("other-org")
	f.createOrgs(t, org, other)
	mine, theirs := newUser(org.ID, "alice"), newUser(other.ID, "bob")
	f.createUsers(t, mine, theirs)
	tests := []struct{ name, org, id string }{
		{"Unknown", org.ID, "carol"},
		{"OtherOrgsUser", org.ID, theirs.ID},
		{"UnknownOrg", f.id("unknown-org"), mine.ID},
		{"EmptyOrg", "", mine.ID},
	}
	for _, tc := range tests {
		_, err := f.ModifyUser(t.Context(), tc.org, tc.id, at(45), func(u *store.User) error {
			t.Errorf("%s: change called with %+v", tc.name, *u)
			return nil
		})
		wantNotFound(t, tc.name+": ModifyUser", err)
	}
	for _, role := range badRoles {
		_, err := f.ModifyUser(t.Context(), org.ID, mine.ID, at(45), func(u *store.User) error {
			u.DisplayName, u.Role = "Changed", role
			return nil
		})
		if err == nil {
			t.Errorf("ModifyUser to role %q succeeded, want an error", role)
		}
	}
	wantUsers(t, "users after refused updates", []store.User{mine, theirs},
		append(f.listUsers(t, org.ID), f.listUsers(t, other.ID)...))
}
