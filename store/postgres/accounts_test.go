package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// These tests play replicas on one database (replicas_test.go) to check
// that the Accounts rules SQLite gets from its single writer hold here
// under concurrent writers in several processes: the last-admin rule and
// ModifyUser's read-change-write. store/storetest checks the same rules
// within one store; these add several pools, and forced interleavings.

// when is a fixed instant for the records of these tests.
var when = time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC)

// accountsFixture creates an organisation with the given admins and
// members on s, each user holding a session, and returns the
// organisation's ID.
func accountsFixture(t *testing.T, s *Store, org string, admins, members []string) string {
	t.Helper()
	if err := s.CreateOrg(t.Context(), store.Org{ID: org, Name: org, CreatedAt: when}); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	for _, ids := range []struct {
		role string
		ids  []string
	}{{store.RoleAdmin, admins}, {store.RoleMember, members}} {
		for _, id := range ids.ids {
			u := store.User{ID: id, OrgID: org, Role: ids.role, CreatedAt: when, UpdatedAt: when}
			if err := s.CreateUser(t.Context(), u, sessionOf(org, id)); err != nil {
				t.Fatalf("CreateUser %s: %v", id, err)
			}
		}
	}
	return org
}

// sessionOf returns the session accountsFixture gives a user.
func sessionOf(org, id string) store.Credential {
	sum := sha256.Sum256([]byte(org + "/" + id))
	return store.Credential{Hash: hex.EncodeToString(sum[:]), Kind: store.CredSession,
		OrgID: org, UserID: id, CSRF: "csrf", CreatedAt: when}
}

// demote demotes the user to member with ModifyUser.
func demote(ctx context.Context, s *Store, org, id string) error {
	_, err := s.ModifyUser(ctx, org, id, when.Add(time.Minute), func(u *store.User) error {
		u.Role = store.RoleMember
		return nil
	})
	return err
}

// disable disables the user.
func disable(ctx context.Context, s *Store, org, id string) error {
	return s.DisableUser(ctx, org, id, when.Add(time.Minute))
}

// removal removes an admin, by demoting or disabling them.
type removal struct {
	name   string
	remove func(ctx context.Context, s *Store, org, id string) error
}

var removals = []removal{{"Demote", demote}, {"Disable", disable}}

// countEnabledAdmins returns how many enabled admins org has on s.
func countEnabledAdmins(t *testing.T, s *Store, org string) int {
	t.Helper()
	users, err := s.ListUsers(t.Context(), org)
	if err != nil {
		t.Fatalf("ListUsers: %v", err)
	}
	n := 0
	for _, u := range users {
		if enabledAdmin(u) {
			n++
		}
	}
	return n
}

// TestLastAdminWaitsForARemoval pauses a DisableUser of one of two admins
// after its count, holding its locks, by locking that admin's session (the
// disable's last step deletes it), then removes the other admin on
// another replica. The second removal must wait for the first and, once
// it commits, find the admin it would remove the last: ErrLastAdmin. A
// removal that counted without waiting would count the paused one's
// admin, still enabled in every snapshot, and leave the organisation
// without an admin.
func TestLastAdminWaitsForARemoval(t *testing.T) {
	r := openReplicas(t, 2)
	ctx := t.Context()
	for _, second := range removals {
		t.Run(second.name, func(t *testing.T) {
			org := accountsFixture(t, r.stores[0], "org-"+second.name, []string{"a", "b"}, nil)
			b := sessionOf(org, "b")
			release := r.hold(t, `SELECT 1 FROM credentials WHERE kind = $1 AND hash = $2 FOR UPDATE`, b.Kind, b.Hash)

			var firstErr, secondErr error
			firstDone := async(func() { firstErr = disable(ctx, r.stores[0], org, "b") })
			r.waitBlocked(t, 0, 1, firstDone)
			secondDone := async(func() { secondErr = second.remove(ctx, r.stores[1], org, "a") })
			r.waitBlocked(t, 1, 1, secondDone)
			release(false)
			<-firstDone
			<-secondDone

			if firstErr != nil {
				t.Errorf("the first removal: %v", firstErr)
			}
			if !errors.Is(secondErr, store.ErrLastAdmin) {
				t.Errorf("the second removal: err = %v, want store.ErrLastAdmin", secondErr)
			}
			if n := countEnabledAdmins(t, r.stores[1], org); n != 1 {
				t.Errorf("%d enabled admins left, want 1", n)
			}
		})
	}
}

// TestLastAdminAcrossReplicas removes every admin of an organisation at
// once, each from a goroutine of its own spread over two replicas, by
// demoting or disabling them in turn, round after round, and checks that
// all but one removal succeed, the other answers ErrLastAdmin, and one
// enabled admin is left.
func TestLastAdminAcrossReplicas(t *testing.T) {
	const admins, rounds = 6, 10
	r := openReplicas(t, 2)
	for round := range rounds {
		ids := make([]string, admins)
		for i := range ids {
			ids[i] = fmt.Sprint("admin-", i)
		}
		org := accountsFixture(t, r.stores[0], fmt.Sprint("org-", round), ids, []string{"member"})
		errs := make([]error, admins)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, id := range ids {
			s, rm := r.stores[i%2], removals[(i/2+round)%2]
			wg.Go(func() {
				<-start
				errs[i] = rm.remove(t.Context(), s, org, id)
			})
		}
		close(start)
		wg.Wait()
		refused := 0
		for i, err := range errs {
			switch {
			case errors.Is(err, store.ErrLastAdmin):
				refused++
			case err != nil:
				t.Errorf("round %d: removing %s: %v", round, ids[i], err)
			}
		}
		if refused != 1 {
			t.Errorf("round %d: %d removals refused with ErrLastAdmin, want 1", round, refused)
		}
		if n := countEnabledAdmins(t, r.stores[1], org); n != 1 {
			t.Errorf("round %d: %d enabled admins left, want 1", round, n)
		}
	}
}

// TestModifyUserAcrossReplicas edits one user's four fields at once, each
// edit from a goroutine of its own spread over two replicas, round after
// round, and checks that every edit survives: none wrote back a field
// another changed as it was before.
func TestModifyUserAcrossReplicas(t *testing.T) {
	const rounds = 10
	r := openReplicas(t, 2)
	edits := []func(*store.User){
		func(u *store.User) { u.DisplayName = "Renamed" },
		func(u *store.User) { u.Department = "Moved" },
		func(u *store.User) { u.Timezone = "Asia/Kolkata" },
		func(u *store.User) { u.Role = store.RoleAdmin },
	}
	for round := range rounds {
		org := accountsFixture(t, r.stores[0], fmt.Sprint("org-", round), []string{"root"}, []string{"m"})
		errs := make([]error, len(edits))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, edit := range edits {
			s := r.stores[i%2]
			wg.Go(func() {
				<-start
				_, errs[i] = s.ModifyUser(t.Context(), org, "m", when.Add(time.Minute), func(u *store.User) error {
					edit(u)
					return nil
				})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: edit %d: %v", round, i, err)
			}
		}
		got, err := r.stores[1].GetUser(t.Context(), org, "m")
		if err != nil {
			t.Fatalf("GetUser: %v", err)
		}
		want := got
		for _, edit := range edits {
			edit(&want)
		}
		if got != want {
			t.Errorf("round %d: user is %+v after concurrent edits, want %+v", round, got, want)
		}
	}
}
