package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// runCases checks the Runs repository.
func runCases() []suiteCase {
	return []suiteCase{
		{"ClaimAndGet", testRunClaimAndGet},
		{"ClaimConflict", testRunClaimConflict},
		{"ClaimTakesOverExpired", testRunClaimTakesOverExpired},
		{"ClaimRefusesBadInput", testRunClaimRefusesBadInput},
		{"ClaimConcurrent", testRunClaimConcurrent},
		{"ClaimConcurrentTakeover", testRunClaimConcurrentTakeover},
		{"RenewReturnsCancelRequests", testRunRenewReturnsCancelRequests},
		{"RenewSkipsExpiredAndTakenOver", testRunRenewSkipsExpiredAndTakenOver},
		{"RenewRefusesBadInput", testRunRenewRefusesBadInput},
		{"EndOnlyByItsTurn", testRunEndOnlyByItsTurn},
		{"EndInterruptsRunningTurn", testRunEndInterruptsRunningTurn},
		{"EndRefusesBadInput", testRunEndRefusesBadInput},
		{"RequestCancel", testRunRequestCancel},
		{"RequestCancelUser", testRunRequestCancelUser},
		{"OrgScoping", testRunOrgScoping},
		{"Cancelled", testRunCancelled},
	}
}

// runAloneCases reap runs in every organisation, so they run alone.
func runAloneCases() []suiteCase {
	return []suiteCase{
		{"Reap", testRunReap},
		{"ConcurrentReapers", testRunConcurrentReapers},
		{"ReapBeforeEnd", testRunReapBeforeEnd},
		{"ReapRefusesBadInput", testRunReapRefusesBadInput},
	}
}

// newRun returns a run of turn in conversation conv of org, by replica,
// leased from start for a minute.
func (f *fixture) newRun(org, conv, turn, replica string, start time.Time) store.Run {
	return store.Run{
		OrgID:          f.id(org),
		ConversationID: f.id(conv),
		TurnID:         f.id(turn),
		UserID:         f.id("user"),
		Replica:        f.id(replica),
		StartedAt:      start,
		ExpiresAt:      start.Add(time.Minute),
	}
}

// putRunTurn stores r's conversation and r's turn, running since
// r.StartedAt, through the Conversations and Turns repositories, and
// returns the turn.
func (f *fixture) putRunTurn(t *testing.T, r store.Run) store.Turn {
	t.Helper()
	c := store.Conversation{ID: r.ConversationID, OrgID: r.OrgID, UserID: r.UserID,
		Agent: "assistant", CreatedAt: r.StartedAt, UpdatedAt: r.StartedAt}
	if err := f.PutConversation(t.Context(), c); err != nil {
		fixtureFailed(t, "PutConversation", err)
	}
	tu := store.Turn{ID: r.TurnID, OrgID: r.OrgID, UserID: r.UserID, ConversationID: r.ConversationID,
		Agent: "assistant", Status: store.TurnRunning, StartedAt: r.StartedAt}
	if err := f.PutTurn(t.Context(), tu); err != nil {
		fixtureFailed(t, "PutTurn", err)
	}
	return tu
}

// fixtureFailed stops a check whose records could not be set up, saying
// so plainly when the backend does not implement the repository yet.
func fixtureFailed(t *testing.T, op string, err error) {
	t.Helper()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("fixture: %s: %v: this check needs that repository, which the backend does not implement yet", op, err)
	}
	t.Fatalf("fixture: %s: %v", op, err)
}

// claimRun claims r, failing the test unless the claim succeeds.
func (f *fixture) claimRun(t *testing.T, r store.Run) *store.Run {
	t.Helper()
	expired, err := f.ClaimRun(t.Context(), r)
	if err != nil {
		t.Fatalf("ClaimRun %s: %v", r.TurnID, err)
	}
	return expired
}

// wantRun fails unless the conversation's stored run is want.
func (f *fixture) wantRun(t *testing.T, what string, want store.Run) {
	t.Helper()
	got, err := f.GetRun(t.Context(), want.OrgID, want.ConversationID)
	if err != nil {
		t.Fatalf("%s: GetRun: %v", what, err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("%s: GetRun (-want +got):\n%s", what, d)
	}
	wantUTC(t, what, got.StartedAt, got.ExpiresAt)
}

// wantTurnStatus fails unless the turn has that status and end.
func (f *fixture) wantTurnStatus(t *testing.T, what string, tu store.Turn, status string, ended time.Time) {
	t.Helper()
	got, err := f.GetTurn(t.Context(), tu.OrgID, tu.ID)
	if err != nil {
		t.Fatalf("%s: GetTurn: %v", what, err)
	}
	if got.Status != status || !got.EndedAt.Equal(ended) {
		t.Errorf("%s: turn is %s ended %v, want %s ended %v", what, got.Status, got.EndedAt, status, ended)
	}
}

func testRunClaimAndGet(t *testing.T, f *fixture) {
	r := f.newRun("org", "conv", "turn", "replica", at(0))
	if expired := f.claimRun(t, r); expired != nil {
		t.Errorf("ClaimRun of a free conversation returned expired run %+v", *expired)
	}
	f.wantRun(t, "after the claim", r)
	_, err := f.GetRun(t.Context(), r.OrgID, f.id("other-conv"))
	wantNotFound(t, "GetRun of a conversation without a run", err)
}

// testRunClaimConflict: a run holds its conversation up to and including
// its ExpiresAt; a claim in that time fails with ErrExists and changes
// nothing.
func testRunClaimConflict(t *testing.T, f *fixture) {
	held := f.newRun("org", "conv", "turn-1", "replica-a", at(0))
	tu := f.putRunTurn(t, held)
	f.claimRun(t, held)
	for _, start := range []time.Time{at(0), held.ExpiresAt.Add(-time.Millisecond), held.ExpiresAt} {
		other := f.newRun("org", "conv", "turn-2", "replica-b", start)
		expired, err := f.ClaimRun(t.Context(), other)
		if !errors.Is(err, store.ErrExists) || expired != nil {
			t.Errorf("ClaimRun at %v of a conversation held until %v: %v, %v; want store.ErrExists",
				start, held.ExpiresAt, expired, err)
		}
	}
	f.wantRun(t, "after the refused claims", held)
	f.wantTurnStatus(t, "the holder's turn", tu, store.TurnRunning, time.Time{})
}

// testRunClaimTakesOverExpired: a claim after the lease passed replaces
// the run, returns it, and marks its turn interrupted at the claim's
// start; a finished turn of an expired run stays as it is.
func testRunClaimTakesOverExpired(t *testing.T, f *fixture) {
	dead := f.newRun("org", "conv", "turn-1", "replica-a", at(0))
	deadTurn := f.putRunTurn(t, dead)
	f.claimRun(t, dead)
	if _, err := f.RequestCancel(t.Context(), dead.OrgID, dead.ConversationID); err != nil {
		t.Fatalf("RequestCancel: %v", err)
	}
	next := f.newRun("org", "conv", "turn-2", "replica-b", dead.ExpiresAt.Add(time.Millisecond))
	nextTurn := f.putRunTurn(t, next)
	expired := f.claimRun(t, next)
	wantExpired := dead
	wantExpired.CancelRequested = true
	if expired == nil {
		t.Fatalf("ClaimRun after the lease passed returned no expired run, want %+v", wantExpired)
	}
	if d := diff(wantExpired, *expired); d != "" {
		t.Errorf("expired run (-want +got):\n%s", d)
	}
	wantUTC(t, "expired run", expired.StartedAt, expired.ExpiresAt)
	f.wantRun(t, "after the takeover", next) // and not cancelled
	f.wantTurnStatus(t, "the dead replica's turn", deadTurn, store.TurnInterrupted, next.StartedAt)
	f.wantTurnStatus(t, "the new turn", nextTurn, store.TurnRunning, time.Time{})

	// The next one expires too, but its turn finished meanwhile.
	nextTurn.Status, nextTurn.EndedAt = store.TurnDone, at(3)
	if err := f.PutTurn(t.Context(), nextTurn); err != nil {
		t.Fatalf("PutTurn: %v", err)
	}
	third := f.newRun("org", "conv", "turn-3", "replica-a", next.ExpiresAt.Add(time.Second))
	if expired := f.claimRun(t, third); expired == nil || expired.TurnID != next.TurnID {
		t.Errorf("second takeover returned %+v, want the run of %s", expired, next.TurnID)
	}
	f.wantTurnStatus(t, "a finished turn of an expired run", nextTurn, store.TurnDone, at(3))
}

// testRunClaimRefusesBadInput: a claim missing a field, with a lease that
// does not end after its start, or already cancelled, is refused and
// writes nothing.
func testRunClaimRefusesBadInput(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Run)
	}{
		{"NoOrg", func(r *store.Run) { r.OrgID = "" }},
		{"NoConversation", func(r *store.Run) { r.ConversationID = "" }},
		{"NoTurn", func(r *store.Run) { r.TurnID = "" }},
		{"NoUser", func(r *store.Run) { r.UserID = "" }},
		{"NoReplica", func(r *store.Run) { r.Replica = "" }},
		{"NoStart", func(r *store.Run) { r.StartedAt = time.Time{} }},
		{"ExpiresAtStart", func(r *store.Run) { r.ExpiresAt = r.StartedAt }},
		{"ExpiresBeforeStart", func(r *store.Run) { r.ExpiresAt = r.StartedAt.Add(-time.Second) }},
		{"Cancelled", func(r *store.Run) { r.CancelRequested = true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := f.newRun("org", "conv-"+tc.name, "turn", "replica", at(0))
			tc.edit(&r)
			expired, err := f.ClaimRun(t.Context(), r)
			if err == nil || errors.Is(err, store.ErrExists) || expired != nil {
				t.Errorf("ClaimRun = %v, %v; want an error other than ErrExists", expired, err)
			}
			if r.OrgID != "" && r.ConversationID != "" {
				_, err := f.GetRun(t.Context(), r.OrgID, r.ConversationID)
				wantNotFound(t, "GetRun after a refused claim", err)
			}
		})
	}
}

// claimAll runs the claims at once and returns each one's answer.
func (f *fixture) claimAll(t *testing.T, runs []store.Run) ([]*store.Run, []error) {
	expired, errs := make([]*store.Run, len(runs)), make([]error, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Go(func() { expired[i], errs[i] = f.ClaimRun(t.Context(), r) })
	}
	wg.Wait()
	return expired, errs
}

// winner returns the index of the one claim that succeeded, failing the
// test unless exactly one did and every other got ErrExists.
func winner(t *testing.T, errs []error) int {
	t.Helper()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("claims %d and %d both won the conversation", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, store.ErrExists):
			t.Errorf("claim %d: %v, want nil or store.ErrExists", i, err)
		}
	}
	if won < 0 {
		t.Fatalf("no claim won the conversation: %v", errs)
	}
	return won
}

// testRunClaimConcurrent: eight replicas claim one free conversation at
// once; exactly one holds it.
func testRunClaimConcurrent(t *testing.T, f *fixture) {
	var runs []store.Run
	for i := range 8 {
		runs = append(runs, f.newRun("org", "conv", fmt.Sprintf("turn-%d", i), fmt.Sprintf("replica-%d", i), at(0)))
	}
	expired, errs := f.claimAll(t, runs)
	won := winner(t, errs)
	if expired[won] != nil {
		t.Errorf("the winning claim of a free conversation returned expired %+v", *expired[won])
	}
	f.wantRun(t, "after the claims", runs[won])
}

// testRunClaimConcurrentTakeover: eight replicas take over one expired
// run at once; exactly one does, and only it returns the expired run.
func testRunClaimConcurrentTakeover(t *testing.T, f *fixture) {
	dead := f.newRun("org", "conv", "turn-dead", "replica-dead", at(0))
	deadTurn := f.putRunTurn(t, dead)
	f.claimRun(t, dead)
	var runs []store.Run
	for i := range 8 {
		runs = append(runs, f.newRun("org", "conv", fmt.Sprintf("turn-%d", i), fmt.Sprintf("replica-%d", i), at(5)))
	}
	expired, errs := f.claimAll(t, runs)
	won := winner(t, errs)
	for i, e := range expired {
		if (i == won) != (e != nil) {
			t.Errorf("claim %d (winner %d) returned expired %+v", i, won, e)
		}
	}
	if e := expired[won]; e == nil || e.TurnID != dead.TurnID {
		t.Errorf("the winner's expired run is %+v, want the run of %s", e, dead.TurnID)
	}
	f.wantRun(t, "after the takeovers", runs[won])
	f.wantTurnStatus(t, "the dead turn", deadTurn, store.TurnInterrupted, at(5))
}

// sortRuns orders runs by organisation and conversation, for comparing
// answers that come in no particular order.
func sortRuns(runs []store.Run) []store.Run {
	slices.SortFunc(runs, func(a, b store.Run) int {
		return strings.Compare(a.OrgID+"\x00"+a.ConversationID, b.OrgID+"\x00"+b.ConversationID)
	})
	return runs
}

// testRunRenewReturnsCancelRequests: a heartbeat extends every run of its
// replica and returns them, with the cancel requests made since; another
// replica's run is left alone.
func testRunRenewReturnsCancelRequests(t *testing.T, f *fixture) {
	a := f.newRun("org", "conv-a", "turn-a", "replica", at(0))
	b := f.newRun("org", "conv-b", "turn-b", "replica", at(0))
	other := f.newRun("org", "conv-c", "turn-c", "other-replica", at(0))
	for _, r := range []store.Run{a, b, other} {
		f.claimRun(t, r)
	}
	if _, err := f.RequestCancel(t.Context(), a.OrgID, a.ConversationID); err != nil {
		t.Fatalf("RequestCancel: %v", err)
	}
	now, expires := at(0).Add(30*time.Second), at(2)
	got, err := f.RenewRuns(t.Context(), a.Replica, now, expires)
	if err != nil {
		t.Fatalf("RenewRuns: %v", err)
	}
	a.ExpiresAt, a.CancelRequested, b.ExpiresAt = expires, true, expires
	if d := diff(sortRuns([]store.Run{a, b}), sortRuns(got)); d != "" {
		t.Errorf("RenewRuns (-want +got):\n%s", d)
	}
	for _, r := range got {
		wantUTC(t, "renewed run", r.StartedAt, r.ExpiresAt)
	}
	f.wantRun(t, "renewed run a", a)
	f.wantRun(t, "renewed run b", b)
	f.wantRun(t, "the other replica's run", other)
	got, err = f.RenewRuns(t.Context(), f.id("idle-replica"), now, expires)
	if err != nil || len(got) != 0 {
		t.Errorf("RenewRuns of a replica without runs = %v, %v; want none", got, err)
	}
}

// testRunRenewSkipsExpiredAndTakenOver: a lease that passed is never
// renewed (one that ends exactly now still is), and a run another replica
// took over is not its old replica's to renew.
func testRunRenewSkipsExpiredAndTakenOver(t *testing.T, f *fixture) {
	now := at(10)
	passed := f.newRun("org", "conv-passed", "turn-1", "replica", now.Add(-2*time.Minute))
	edge := f.newRun("org", "conv-edge", "turn-2", "replica", now.Add(-time.Minute)) // expires at now
	lost := f.newRun("org", "conv-lost", "turn-3", "replica", now.Add(-2*time.Minute))
	for _, r := range []store.Run{passed, edge, lost} {
		f.claimRun(t, r)
	}
	taker := f.newRun("org", "conv-lost", "turn-4", "other-replica", now.Add(-time.Second))
	if expired := f.claimRun(t, taker); expired == nil {
		t.Fatalf("the takeover of an expired run returned no expired run")
	}
	got, err := f.RenewRuns(t.Context(), passed.Replica, now, now.Add(time.Minute))
	if err != nil {
		t.Fatalf("RenewRuns: %v", err)
	}
	edge.ExpiresAt = now.Add(time.Minute)
	if d := diff([]store.Run{edge}, got); d != "" {
		t.Errorf("RenewRuns (-want +got):\n%s", d)
	}
	f.wantRun(t, "the passed lease", passed)
	f.wantRun(t, "the run taken over", taker)
}

func testRunRenewRefusesBadInput(t *testing.T, f *fixture) {
	r := f.newRun("org", "conv", "turn", "replica", at(0))
	f.claimRun(t, r)
	tests := []struct {
		name         string
		replica      string
		now, expires time.Time
	}{
		{"NoReplica", "", at(0), at(1)},
		{"ExpiresNow", r.Replica, at(0), at(0)},
		{"ExpiresBeforeNow", r.Replica, at(1), at(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := f.RenewRuns(t.Context(), tc.replica, tc.now, tc.expires); err == nil {
				t.Errorf("RenewRuns = %v, nil; want an error", got)
			}
			f.wantRun(t, "after the refused renewal", r)
		})
	}
}

// testRunEndOnlyByItsTurn: EndRun releases a run only for the turn that
// holds it; the turn of a run taken over cannot release its successor's,
// nor change its own turn, which the takeover ended.
func testRunEndOnlyByItsTurn(t *testing.T, f *fixture) {
	first := f.newRun("org", "conv", "turn-1", "replica-a", at(0))
	firstTurn := f.putRunTurn(t, first)
	f.claimRun(t, first)
	err := f.EndRun(t.Context(), first.OrgID, first.ConversationID, f.id("turn-2"), at(1))
	wantNotFound(t, "EndRun by another turn", err)
	f.wantRun(t, "after another turn's EndRun", first)
	f.wantTurnStatus(t, "the holder's turn after another turn's EndRun", firstTurn, store.TurnRunning, time.Time{})

	second := f.newRun("org", "conv", "turn-2", "replica-b", first.ExpiresAt.Add(time.Second))
	secondTurn := f.putRunTurn(t, second)
	f.claimRun(t, second)
	err = f.EndRun(t.Context(), first.OrgID, first.ConversationID, first.TurnID, at(9))
	wantNotFound(t, "EndRun by the turn taken over", err)
	f.wantRun(t, "after the old turn's EndRun", second)
	f.wantTurnStatus(t, "the turn taken over", firstTurn, store.TurnInterrupted, second.StartedAt)
	f.wantTurnStatus(t, "the new turn after the old turn's EndRun", secondTurn, store.TurnRunning, time.Time{})

	if err := f.EndRun(t.Context(), second.OrgID, second.ConversationID, second.TurnID, at(9)); err != nil {
		t.Fatalf("EndRun by its turn: %v", err)
	}
	_, err = f.GetRun(t.Context(), second.OrgID, second.ConversationID)
	wantNotFound(t, "GetRun after EndRun", err)
	err = f.EndRun(t.Context(), second.OrgID, second.ConversationID, second.TurnID, at(10))
	wantNotFound(t, "EndRun twice", err)
	f.wantTurnStatus(t, "the ended turn after EndRun twice", secondTurn, store.TurnInterrupted, at(9))
	third := f.newRun("org", "conv", "turn-3", "replica-a", at(0))
	f.claimRun(t, third) // the conversation is free again at once
}

// testRunEndInterruptsRunningTurn: EndRun marks its turn interrupted at
// `at` when the turn is still stored as running (its engine never wrote
// the final status), and leaves a turn that finished or paused as it is;
// a run without a stored turn ends all the same.
func testRunEndInterruptsRunningTurn(t *testing.T, f *fixture) {
	end := at(7)
	t.Run("Running", func(t *testing.T) {
		r := f.newRun("org", "conv-running", "turn-running", "replica", at(0))
		tu := f.putRunTurn(t, r)
		f.claimRun(t, r)
		if err := f.EndRun(t.Context(), r.OrgID, r.ConversationID, r.TurnID, end); err != nil {
			t.Fatalf("EndRun: %v", err)
		}
		_, err := f.GetRun(t.Context(), r.OrgID, r.ConversationID)
		wantNotFound(t, "GetRun after EndRun", err)
		f.wantTurnStatus(t, "a running turn after EndRun", tu, store.TurnInterrupted, end)
	})
	for _, c := range []struct {
		status string
		ended  time.Time
	}{
		{store.TurnDone, at(3)},
		{store.TurnFailed, at(3)},
		{store.TurnInterrupted, at(3)},
		{store.TurnPaused, time.Time{}},
	} {
		t.Run(c.status, func(t *testing.T) {
			r := f.newRun("org", "conv-"+c.status, "turn-"+c.status, "replica", at(0))
			tu := f.putRunTurn(t, r)
			f.claimRun(t, r)
			tu.Status, tu.EndedAt = c.status, c.ended
			if err := f.PutTurn(t.Context(), tu); err != nil {
				t.Fatalf("PutTurn: %v", err)
			}
			if err := f.EndRun(t.Context(), r.OrgID, r.ConversationID, r.TurnID, end); err != nil {
				t.Fatalf("EndRun: %v", err)
			}
			_, err := f.GetRun(t.Context(), r.OrgID, r.ConversationID)
			wantNotFound(t, "GetRun after EndRun", err)
			f.wantTurnStatus(t, "a "+c.status+" turn after EndRun", tu, c.status, c.ended)
		})
	}
	t.Run("NoTurn", func(t *testing.T) {
		r := f.newRun("org", "conv-no-turn", "turn-none", "replica", at(0))
		f.claimRun(t, r)
		if err := f.EndRun(t.Context(), r.OrgID, r.ConversationID, r.TurnID, end); err != nil {
			t.Fatalf("EndRun of a run without a stored turn: %v", err)
		}
		_, err := f.GetTurn(t.Context(), r.OrgID, r.TurnID)
		wantNotFound(t, "GetTurn of a run without a stored turn", err)
	})
}

// testRunEndRefusesBadInput: EndRun refuses a zero `at`, with an error
// other than ErrNotFound, and neither releases the run nor touches its
// turn.
func testRunEndRefusesBadInput(t *testing.T, f *fixture) {
	r := f.newRun("org", "conv", "turn", "replica", at(0))
	tu := f.putRunTurn(t, r)
	f.claimRun(t, r)
	err := f.EndRun(t.Context(), r.OrgID, r.ConversationID, r.TurnID, time.Time{})
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("EndRun with a zero end time = %v, want an error other than ErrNotFound", err)
	}
	f.wantRun(t, "after the refused EndRun", r)
	f.wantTurnStatus(t, "its turn", tu, store.TurnRunning, time.Time{})
}

func testRunRequestCancel(t *testing.T, f *fixture) {
	r := f.newRun("org", "conv", "turn", "replica", at(0))
	f.claimRun(t, r)
	want := r
	want.CancelRequested = true
	for i := range 2 { // marking twice is no error
		got, err := f.RequestCancel(t.Context(), r.OrgID, r.ConversationID)
		if err != nil {
			t.Fatalf("RequestCancel %d: %v", i, err)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("RequestCancel %d (-want +got):\n%s", i, d)
		}
	}
	f.wantRun(t, "after RequestCancel", want)
	got, err := f.RequestCancel(t.Context(), r.OrgID, f.id("idle-conv"))
	wantNotFound(t, "RequestCancel of a conversation without a run", err)
	if d := diff(store.Run{}, got); d != "" {
		t.Errorf("RequestCancel without a run returned a run (-want +got):\n%s", d)
	}
}

// testRunRequestCancelUser marks every run of one user in one
// organisation: not another user's, nor the same user ID's in another
// organisation.
func testRunRequestCancelUser(t *testing.T, f *fixture) {
	a := f.newRun("org", "conv-a", "turn-a", "replica-1", at(0))
	b := f.newRun("org", "conv-b", "turn-b", "replica-2", at(0))
	otherUser := f.newRun("org", "conv-c", "turn-c", "replica-1", at(0))
	otherUser.UserID = f.id("other-user")
	otherOrg := f.newRun("other-org", "conv-a", "turn-d", "replica-1", at(0))
	for _, r := range []store.Run{a, b, otherUser, otherOrg} {
		f.claimRun(t, r)
	}
	n, err := f.RequestCancelUser(t.Context(), a.OrgID, a.UserID)
	if err != nil || n != 2 {
		t.Errorf("RequestCancelUser = %d, %v; want 2", n, err)
	}
	a.CancelRequested, b.CancelRequested = true, true
	for _, r := range []store.Run{a, b, otherUser, otherOrg} {
		f.wantRun(t, "run of "+r.TurnID, r)
	}
	n, err = f.RequestCancelUser(t.Context(), a.OrgID, f.id("idle-user"))
	if err != nil || n != 0 {
		t.Errorf("RequestCancelUser of a user without runs = %d, %v; want 0", n, err)
	}
}

// testRunOrgScoping: another organisation never reads, cancels or ends a
// run, and a conversation ID of its own is a conversation of its own.
func testRunOrgScoping(t *testing.T, f *fixture) {
	mine := f.newRun("org", "conv", "turn", "replica", at(0))
	f.claimRun(t, mine)
	other := f.id("other-org")
	got, err := f.GetRun(t.Context(), other, mine.ConversationID)
	wantNotFound(t, "GetRun from another organisation", err)
	if d := diff(store.Run{}, got); d != "" {
		t.Errorf("GetRun revealed a run (-want +got):\n%s", d)
	}
	_, err = f.RequestCancel(t.Context(), other, mine.ConversationID)
	wantNotFound(t, "RequestCancel from another organisation", err)
	err = f.EndRun(t.Context(), other, mine.ConversationID, mine.TurnID, at(1))
	wantNotFound(t, "EndRun from another organisation", err)
	if n, err := f.RequestCancelUser(t.Context(), other, mine.UserID); err != nil || n != 0 {
		t.Errorf("RequestCancelUser from another organisation = %d, %v; want 0", n, err)
	}
	f.wantRun(t, "after the other organisation's calls", mine)
	theirs := mine
	theirs.OrgID, theirs.TurnID = other, f.id("their-turn")
	f.claimRun(t, theirs)
	f.wantRun(t, "their run", theirs)
	f.wantRun(t, "my run", mine)
}

// testRunCancelled: every Runs method fails with context.Canceled on a
// cancelled context, and no write takes effect.
func testRunCancelled(t *testing.T, f *fixture) {
	held := f.newRun("org", "conv", "turn", "replica", at(0))
	f.claimRun(t, held)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"ClaimRun", func() error {
			_, err := f.ClaimRun(cancelled, f.newRun("org", "conv-new", "turn", "replica", at(0)))
			return err
		}},
		{"RenewRuns", func() error { _, err := f.RenewRuns(cancelled, held.Replica, at(0), at(9)); return err }},
		{"EndRun", func() error { return f.EndRun(cancelled, held.OrgID, held.ConversationID, held.TurnID, at(1)) }},
		{"RequestCancel", func() error { _, err := f.RequestCancel(cancelled, held.OrgID, held.ConversationID); return err }},
		{"RequestCancelUser", func() error { _, err := f.RequestCancelUser(cancelled, held.OrgID, held.UserID); return err }},
		{"ReapRuns", func() error { _, err := f.ReapRuns(cancelled, at(0), at(0)); return err }},
		{"GetRun", func() error { _, err := f.GetRun(cancelled, held.OrgID, held.ConversationID); return err }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", c.name, err)
		}
	}
	f.wantRun(t, "after the cancelled calls", held)
	_, err := f.GetRun(t.Context(), held.OrgID, f.id("conv-new"))
	wantNotFound(t, "GetRun of the cancelled claim", err)
}

// reapEra is when the reaping checks' runs live: long before every other
// check's, so that their reaps (which reach every organisation) take no
// other check's run, and other checks' runs never expire before their
// reaps' instants. Each reaping check has a year of its own.
func reapEra(year int) time.Time { return time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC) }

// testRunReap: ReapRuns removes the runs whose lease passed before now
// (not one that ends exactly now), returns each once, and marks their
// running turns interrupted at now.
func testRunReap(t *testing.T, f *fixture) {
	now := reapEra(2001).Add(time.Hour)
	dead := []store.Run{
		f.newRun("org", "conv-1", "turn-1", "replica-a", now.Add(-2*time.Minute)),
		f.newRun("other-org", "conv-2", "turn-2", "replica-b", now.Add(-time.Hour)),
	}
	edge := f.newRun("org", "conv-3", "turn-3", "replica-a", now.Add(-time.Minute)) // expires at now
	var turns []store.Turn
	for _, r := range append(slices.Clone(dead), edge) {
		turns = append(turns, f.putRunTurn(t, r))
		f.claimRun(t, r)
	}
	got, err := f.ReapRuns(t.Context(), now, now)
	if err != nil {
		t.Fatalf("ReapRuns: %v", err)
	}
	mine := sortRuns(f.ownRuns(got))
	if d := diff(sortRuns(slices.Clone(dead)), mine); d != "" {
		t.Errorf("ReapRuns (-want +got):\n%s", d)
	}
	for _, r := range mine {
		wantUTC(t, "reaped run", r.StartedAt, r.ExpiresAt)
	}
	for i, r := range dead {
		_, err := f.GetRun(t.Context(), r.OrgID, r.ConversationID)
		wantNotFound(t, "GetRun of a reaped run", err)
		f.wantTurnStatus(t, "turn of a reaped run", turns[i], store.TurnInterrupted, now)
	}
	f.wantRun(t, "the run that expires now", edge)
	f.wantTurnStatus(t, "its turn", turns[2], store.TurnRunning, time.Time{})
	again, err := f.ReapRuns(t.Context(), now, now)
	if err != nil || len(f.ownRuns(again)) != 0 {
		t.Errorf("ReapRuns again = %v, %v; want none of this check's runs", again, err)
	}
}

// testRunReapBeforeEnd: ReapRuns with expiredBefore after `at` (as a
// starting SQLite server calls it) reaps a run whose lease has not passed
// at `at` but ends before expiredBefore, and ends its turn at `at`, not
// at expiredBefore; a run whose lease ends at expiredBefore stays.
func testRunReapBeforeEnd(t *testing.T, f *fixture) {
	era := reapEra(2003)
	live := f.newRun("org", "conv-1", "turn-1", "replica", era) // expires at era+1m
	later := f.newRun("org", "conv-2", "turn-2", "replica", era.Add(time.Minute))
	liveTurn, laterTurn := f.putRunTurn(t, live), f.putRunTurn(t, later)
	f.claimRun(t, live)
	f.claimRun(t, later)
	ended, expiredBefore := era.Add(30*time.Second), later.ExpiresAt
	got, err := f.ReapRuns(t.Context(), expiredBefore, ended)
	if err != nil {
		t.Fatalf("ReapRuns: %v", err)
	}
	if d := diff([]store.Run{live}, f.ownRuns(got)); d != "" {
		t.Errorf("ReapRuns (-want +got):\n%s", d)
	}
	_, err = f.GetRun(t.Context(), live.OrgID, live.ConversationID)
	wantNotFound(t, "GetRun of the reaped run", err)
	f.wantTurnStatus(t, "turn of the reaped run", liveTurn, store.TurnInterrupted, ended)
	f.wantRun(t, "the run that expires at expiredBefore", later)
	f.wantTurnStatus(t, "its turn", laterTurn, store.TurnRunning, time.Time{})
}

// testRunReapRefusesBadInput: ReapRuns refuses a zero expiredBefore or
// `at`, and reaps nothing.
func testRunReapRefusesBadInput(t *testing.T, f *fixture) {
	era := reapEra(2004)
	r := f.newRun("org", "conv", "turn", "replica", era)
	tu := f.putRunTurn(t, r)
	f.claimRun(t, r)
	after := r.ExpiresAt.Add(time.Minute)
	for _, c := range []struct {
		name                 string
		expiredBefore, ended time.Time
	}{
		{"ZeroExpiredBefore", time.Time{}, after},
		{"ZeroAt", after, time.Time{}},
	} {
		if got, err := f.ReapRuns(t.Context(), c.expiredBefore, c.ended); err == nil {
			t.Errorf("%s: ReapRuns = %v, nil; want an error", c.name, got)
		}
	}
	f.wantRun(t, "after the refused reaps", r)
	f.wantTurnStatus(t, "its turn", tu, store.TurnRunning, time.Time{})
}

// ownRuns returns the runs of this subtest (a store shared with earlier
// runs may hold others that expired long ago).
func (f *fixture) ownRuns(runs []store.Run) []store.Run {
	var mine []store.Run
	for _, r := range runs {
		if strings.HasPrefix(r.OrgID, f.prefix+"/") {
			mine = append(mine, r)
		}
	}
	return mine
}

// testRunConcurrentReapers: four replicas reap twenty expired runs at
// once; every run is returned by exactly one of them, and every turn
// interrupted.
func testRunConcurrentReapers(t *testing.T, f *fixture) {
	now := reapEra(2002).Add(time.Hour)
	var dead []store.Run
	var turns []store.Turn
	for i := range 20 {
		r := f.newRun(fmt.Sprintf("org-%d", i%3), fmt.Sprintf("conv-%d", i), fmt.Sprintf("turn-%d", i), "replica", now.Add(-2*time.Minute))
		turns = append(turns, f.putRunTurn(t, r))
		f.claimRun(t, r)
		dead = append(dead, r)
	}
	const reapers = 4
	answers, errs := make([][]store.Run, reapers), make([]error, reapers)
	var wg sync.WaitGroup
	for i := range reapers {
		wg.Go(func() { answers[i], errs[i] = f.ReapRuns(t.Context(), now, now) })
	}
	wg.Wait()
	by := map[string]int{} // run key → reaper
	var all []store.Run
	for i, ans := range answers {
		if errs[i] != nil {
			t.Fatalf("reaper %d: %v", i, errs[i])
		}
		for _, r := range ans {
			key := r.OrgID + "\x00" + r.ConversationID
			if j, ok := by[key]; ok {
				t.Errorf("run of %s returned by reapers %d and %d", r.TurnID, j, i)
			}
			by[key] = i
			all = append(all, r)
		}
	}
	if d := diff(sortRuns(dead), sortRuns(f.ownRuns(all))); d != "" {
		t.Errorf("runs reaped by all reapers (-want +got):\n%s", d)
	}
	for _, tu := range turns {
		f.wantTurnStatus(t, "turn "+tu.ID, tu, store.TurnInterrupted, now)
	}
}
