package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks ModifyUser beyond a plain edit (accounts.go): change
// edits the user as stored, so concurrent edits of different fields both
// survive; change's error writes nothing; an edit that changes nothing
// writes nothing. The last-admin rule is in userdisable.go.

// userModifyCases checks ModifyUser's read-change-write.
func userModifyCases() []suiteCase {
	return []suiteCase{
		{"ModifyUserConcurrent", testModifyUserConcurrent},
		{"ModifyUserChangeError", testModifyUserChangeError},
		{"ModifyUserUnchanged", testModifyUserUnchanged},
	}
}

// modify calls ModifyUser with a change that sets what edit sets.
func (f *fixture) modify(ctx context.Context, org, id string, minute int, edit func(*store.User)) error {
	_, err := f.ModifyUser(ctx, org, id, at(minute), func(u *store.User) error {
		edit(u)
		return nil
	})
	return err
}

// testModifyUserConcurrent demotes an admin while the admin renames
// themself, round after round, from two goroutines released together,
// and checks that both edits survive: neither writes back the field the
// other changed as it was before.
func testModifyUserConcurrent(t *testing.T, f *fixture) {
	const rounds = 20
	for r := range rounds {
		tc := adminCase{name: fmt.Sprint("round-", r), admins: []string{"a", "b"}, target: "a"}
		org, _ := f.setupAdmins(t, tc)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var errDemote, errRename error
		wg.Go(func() {
			<-start
			errDemote = f.modify(t.Context(), org, "a", 40, func(u *store.User) { u.Role = store.RoleMember })
		})
		wg.Go(func() {
			<-start
			errRename = f.modify(t.Context(), org, "a", 41, func(u *store.User) { u.DisplayName = "Renamed" })
		})
		close(start)
		wg.Wait()
		if errDemote != nil || errRename != nil {
			t.Fatalf("round %d: demote: %v, rename: %v", r, errDemote, errRename)
		}
		got := f.getUser(t, org, "a")
		if got.Role != store.RoleMember || got.DisplayName != "Renamed" {
			t.Errorf("round %d: user is %q, %q after a concurrent demotion and rename, want %q, %q",
				r, got.Role, got.DisplayName, store.RoleMember, "Renamed")
		}
	}
}

// testModifyUserChangeError checks that change's error comes back as is
// and writes nothing, though change edited the user first, demoting the
// last admin included (change's error wins over the rule).
func testModifyUserChangeError(t *testing.T, f *fixture) {
	errRefused := errors.New("display_name must not be blank")
	tc := adminCase{name: "only-admin", admins: []string{"a"}, members: []string{"m"}, target: "a"}
	org, want := f.setupAdmins(t, tc)
	for _, id := range []string{"a", "m"} {
		got, err := f.ModifyUser(t.Context(), org, id, at(40), func(u *store.User) error {
			u.DisplayName, u.Department, u.Timezone, u.Role = "", "x", "UTC", store.RoleMember
			return errRefused
		})
		if err != errRefused { //nolint:errorlint // as is: not wrapped
			t.Errorf("ModifyUser of %s: err = %v, want change's error as is", id, err)
		}
		if d := diff(store.User{}, got); d != "" {
			t.Errorf("ModifyUser of %s returned a user with its error (-want +got):\n%s", id, d)
		}
	}
	wantUsers(t, "ListUsers after refused changes", want, f.listUsers(t, org))
}

// testModifyUserUnchanged checks that a change that leaves the four
// fields as they were, whatever else it sets, writes nothing: UpdatedAt
// stays, and the stored user is returned.
func testModifyUserUnchanged(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "alice")
	want := f.getUser(t, org, "alice")
	edits := []struct {
		name string
		edit func(*store.User)
	}{
		{"Nothing", func(*store.User) {}},
		{"SameValues", func(u *store.User) { u.DisplayName, u.Role = want.DisplayName, want.Role }},
		{"IgnoredFields", func(u *store.User) { u.CreatedAt, u.UpdatedAt, u.DisabledAt = at(1), at(2), at(3) }},
	}
	for _, e := range edits {
		got, err := f.ModifyUser(t.Context(), org, "alice", at(40), func(u *store.User) error {
			e.edit(u)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: ModifyUser: %v", e.name, err)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("%s: ModifyUser returned (-want +got):\n%s", e.name, d)
		}
		if d := diff(want, f.getUser(t, org, "alice")); d != "" {
			t.Errorf("%s: stored after ModifyUser (-want +got):\n%s", e.name, d)
		}
	}
}
