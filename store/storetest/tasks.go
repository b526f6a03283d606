package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// taskCases checks the Tasks repository. The claims run alone: a claim
// takes due tasks of every organisation.
func taskCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testTaskRoundTrip},
		{"Invalid", testTaskInvalid},
		{"UserCap", testTaskUserCap},
		{"ConcurrentUserCap", testTaskConcurrentCap},
		{"DonePruned", testTaskDonePruned},
		{"Update", testTaskUpdate},
		{"Delete", testTaskDelete},
		{"ListCapped", testTaskListCapped},
	}
}

// taskAloneCases are the claims.
func taskAloneCases() []suiteCase {
	return []suiteCase{
		{"ClaimLeases", testTaskClaimLeases},
		{"ConcurrentClaims", testTaskConcurrentClaims},
		{"Finish", testTaskFinish},
		{"RetryRenew", testTaskRetryRenew},
		{"NextDue", testTaskNextDue},
	}
}

// claimEpoch is when the claim checks' tasks are due: later than any
// other check's, so draining before each claim check takes only what an
// earlier run left.
var claimEpoch = time.Date(2031, time.June, 1, 12, 0, 0, 0, time.UTC)

// newTask returns an unstored active task of the fixture's "org" and
// "ana", due at due.
func (f *fixture) newTask(id string, due time.Time) store.Task {
	return store.Task{OrgID: f.id("org"), ID: id, UserID: f.id("ana"), Agent: "assistant", ConversationID: f.id("conv"),
		Title: "Check in " + id, Instruction: "Ask Ana how she is doing (" + id + ").", Kind: store.ScheduleCron,
		Spec: "0 */3 * * *", Timezone: "Europe/Paris", Tools: []string{"save_memory", "calc", "save_memory"},
		State: store.TaskActive, NextRunAt: due, CreatedAt: at(1), UpdatedAt: at(1)}
}

// mustCreateTask stores tk or fails.
func (f *fixture) mustCreateTask(t *testing.T, tk store.Task) store.Task {
	t.Helper()
	got, err := f.CreateTask(t.Context(), tk)
	if err != nil {
		t.Fatalf("CreateTask(%s): %v", tk.ID, err)
	}
	return got
}

// drainTasks takes and deletes every task due at now: what an earlier
// run of the suite on the same database left. Claim checks run alone,
// so nothing else is claiming.
func (f *fixture) drainTasks(t *testing.T, now time.Time) {
	t.Helper()
	for {
		got, err := f.ClaimDueTasks(t.Context(), store.TaskClaim{Now: now, Owner: "drain", Lease: time.Hour, Limit: 1000})
		if err != nil {
			t.Fatalf("drain: %v", err)
		}
		if len(got) == 0 {
			return
		}
		for _, tk := range got {
			if err := f.DeleteTask(t.Context(), tk.OrgID, tk.ID); err != nil {
				t.Fatalf("drain: %v", err)
			}
		}
	}
}

func taskIDs(ts []store.Task) []string {
	out := []string{}
	for _, tk := range ts {
		out = append(out, tk.ID)
	}
	return out
}

func testTaskRoundTrip(t *testing.T, f *fixture) {
	ctx := t.Context()
	due := at(30)
	want := f.newTask("t1", due)
	got := f.mustCreateTask(t, want)
	want.Tools = []string{"calc", "save_memory"}
	want.Version = 0
	if d := diff(want, got); d != "" {
		t.Errorf("CreateTask returned (-want +got):\n%s", d)
	}
	read, err := f.GetTask(ctx, want.OrgID, "t1")
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if d := diff(want, read); d != "" {
		t.Errorf("GetTask (-want +got):\n%s", d)
	}
	wantUTC(t, "task", read.NextRunAt, read.CreatedAt, read.UpdatedAt)
	if _, err := f.CreateTask(ctx, want); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateTask of a taken id: %v, want ErrExists", err)
	}
	later := f.newTask("t2", due.Add(time.Hour))
	later.ConversationID = f.id("other-conv")
	f.mustCreateTask(t, later)
	bruno := f.newTask("t3", due.Add(-time.Hour))
	bruno.UserID = f.id("bruno")
	f.mustCreateTask(t, bruno)
	for _, tc := range []struct {
		name   string
		filter store.TaskFilter
		want   []string
	}{
		{"Org", store.TaskFilter{}, []string{"t3", "t1", "t2"}},
		{"User", store.TaskFilter{UserID: want.UserID}, []string{"t1", "t2"}},
		{"Conversation", store.TaskFilter{ConversationID: f.id("other-conv")}, []string{"t2"}},
	} {
		list, err := f.ListTasks(ctx, want.OrgID, tc.filter)
		if err != nil {
			t.Fatalf("ListTasks %s: %v", tc.name, err)
		}
		if d := diff(tc.want, taskIDs(list)); d != "" {
			t.Errorf("ListTasks %s (-want +got):\n%s", tc.name, d)
		}
	}
	other := f.id("other-org")
	_, err = f.GetTask(ctx, other, "t1")
	wantNotFound(t, "GetTask of another organisation", err)
	if list, err := f.ListTasks(ctx, other, store.TaskFilter{}); err != nil || len(list) != 0 {
		t.Errorf("ListTasks of another organisation: %v, %v", taskIDs(list), err)
	}
	wantNotFound(t, "DeleteTask of another organisation", f.DeleteTask(ctx, other, "t1"))
}

func testTaskInvalid(t *testing.T, f *fixture) {
	ctx := t.Context()
	base := f.newTask("bad", at(30))
	for _, tc := range []struct {
		name   string
		change func(*store.Task)
	}{
		{"NoInstruction", func(tk *store.Task) { tk.Instruction = "  " }},
		{"LongInstruction", func(tk *store.Task) { tk.Instruction = strings.Repeat("é", store.MaxTaskInstructionRunes+1) }},
		{"LongTitle", func(tk *store.Task) { tk.Title = strings.Repeat("a", store.MaxTaskTitleRunes+1) }},
		{"UnknownKind", func(tk *store.Task) { tk.Kind = "weekly" }},
		{"NoCron", func(tk *store.Task) { tk.Spec = "" }},
		{"OnceNotAnInstant", func(tk *store.Task) { tk.Kind, tk.Spec = store.ScheduleOnce, "tomorrow" }},
		{"ShortInterval", func(tk *store.Task) { tk.Kind, tk.Every = store.ScheduleInterval, 30*time.Second }},
		{"LongSpec", func(tk *store.Task) { tk.Spec = strings.Repeat("*", store.MaxTaskSpecBytes+1) }},
		{"UnknownState", func(tk *store.Task) { tk.State = "cancelled" }},
		{"ActiveWithoutDue", func(tk *store.Task) { tk.NextRunAt = time.Time{} }},
		{"NoConversation", func(tk *store.Task) { tk.ConversationID = "" }},
		{"ManyTools", func(tk *store.Task) {
			tk.Tools = nil
			for i := range store.MaxTaskTools + 1 {
				tk.Tools = append(tk.Tools, fmt.Sprintf("tool_%d", i))
			}
		}},
	} {
		tk := base
		tc.change(&tk)
		if _, err := f.CreateTask(ctx, tk); !errors.Is(err, store.ErrTaskInvalid) {
			t.Errorf("%s: CreateTask: %v, want ErrTaskInvalid", tc.name, err)
		}
	}
	if list, _ := f.ListTasks(ctx, base.OrgID, store.TaskFilter{}); len(list) != 0 {
		t.Errorf("refused tasks were stored: %v", taskIDs(list))
	}
}

func testTaskUserCap(t *testing.T, f *fixture) {
	ctx := t.Context()
	for i := range store.MaxTasksPerUser {
		tk := f.newTask(fmt.Sprintf("t%02d", i), at(30))
		if i%2 == 1 {
			tk.State = store.TaskPaused // paused tasks count too
		}
		f.mustCreateTask(t, tk)
	}
	if _, err := f.CreateTask(ctx, f.newTask("over", at(30))); !errors.Is(err, store.ErrTaskQuota) {
		t.Fatalf("a task past the person's cap: %v, want ErrTaskQuota", err)
	}
	done := f.newTask("done", time.Time{})
	done.State = store.TaskDone
	f.mustCreateTask(t, done) // finished tasks do not count
	other := f.newTask("bruno", at(30))
	other.UserID = f.id("bruno")
	f.mustCreateTask(t, other) // another person's cap is theirs
	if _, err := f.GetTask(ctx, other.OrgID, "over"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused task was stored: %v", err)
	}
	// Reviving the finished task would pass the cap.
	next := at(40)
	sched := store.TaskSchedule{Kind: store.ScheduleOnce, Spec: next.Format(time.RFC3339), Timezone: "UTC"}
	if _, err := f.UpdateTask(ctx, done.OrgID, "done", 0, store.TaskUpdate{Schedule: &sched, NextRunAt: &next}); !errors.Is(err, store.ErrTaskQuota) {
		t.Errorf("reviving a finished task past the cap: %v, want ErrTaskQuota", err)
	}
}

func testTaskConcurrentCap(t *testing.T, f *fixture) {
	var wg sync.WaitGroup
	errs := make([]error, 2*store.MaxTasksPerUser)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = f.CreateTask(t.Context(), f.newTask(fmt.Sprintf("c%02d", i), at(30)))
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrTaskQuota):
			t.Errorf("concurrent create: %v", err)
		}
	}
	list, err := f.ListTasks(t.Context(), f.id("org"), store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if ok != store.MaxTasksPerUser || len(list) != store.MaxTasksPerUser {
		t.Errorf("%d creates succeeded and %d tasks are stored, want %d each", ok, len(list), store.MaxTasksPerUser)
	}
}

func testTaskDonePruned(t *testing.T, f *fixture) {
	for i := range store.MaxDoneTasksPerUser + 5 {
		tk := f.newTask(fmt.Sprintf("d%02d", i), time.Time{})
		tk.State, tk.UpdatedAt = store.TaskDone, at(i%60).Add(time.Duration(i)*time.Hour)
		f.mustCreateTask(t, tk)
	}
	list, err := f.ListTasks(t.Context(), f.id("org"), store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != store.MaxDoneTasksPerUser {
		t.Fatalf("%d finished tasks kept, want %d", len(list), store.MaxDoneTasksPerUser)
	}
	ids := taskIDs(list)
	if slices.Contains(ids, "d00") || !slices.Contains(ids, fmt.Sprintf("d%02d", store.MaxDoneTasksPerUser+4)) {
		t.Errorf("the oldest finished tasks should go first; kept %v", ids)
	}
}

func testTaskUpdate(t *testing.T, f *fixture) {
	ctx := t.Context()
	tk := f.mustCreateTask(t, f.newTask("u1", at(30)))
	instr := "Ask Ana about her week."
	if _, err := f.UpdateTask(ctx, tk.OrgID, "u1", tk.Version+1, store.TaskUpdate{Instruction: &instr}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("an update from a stale version: %v, want ErrConflict", err)
	}
	paused := store.TaskPaused
	got, err := f.UpdateTask(ctx, tk.OrgID, "u1", tk.Version, store.TaskUpdate{Instruction: &instr, State: &paused, UpdatedAt: at(35)})
	if err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	if got.Instruction != instr || got.State != store.TaskPaused || got.Version != tk.Version+1 || !got.UpdatedAt.Equal(at(35)) {
		t.Errorf("updated task %+v", got)
	}
	read, _ := f.GetTask(ctx, tk.OrgID, "u1")
	if d := diff(got, read); d != "" {
		t.Errorf("GetTask after update (-want +got):\n%s", d)
	}
	empty := ""
	done := store.TaskDone
	for name, u := range map[string]store.TaskUpdate{
		"EmptyInstruction": {Instruction: &empty},
		"MarkedDone":       {State: &done},
		"BadSchedule":      {Schedule: &store.TaskSchedule{Kind: store.ScheduleInterval, Every: time.Second}},
	} {
		if _, err := f.UpdateTask(ctx, tk.OrgID, "u1", read.Version, u); !errors.Is(err, store.ErrTaskInvalid) {
			t.Errorf("%s: %v, want ErrTaskInvalid", name, err)
		}
	}
	if again, _ := f.GetTask(ctx, tk.OrgID, "u1"); diff(read, again) != "" {
		t.Errorf("refused updates changed the task: %+v", again)
	}
	_, err = f.UpdateTask(ctx, tk.OrgID, "none", 0, store.TaskUpdate{Instruction: &instr})
	wantNotFound(t, "UpdateTask of no task", err)
}

func testTaskDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	tk := f.mustCreateTask(t, f.newTask("x", at(30)))
	if err := f.DeleteTask(ctx, tk.OrgID, "x"); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	_, err := f.GetTask(ctx, tk.OrgID, "x")
	wantNotFound(t, "GetTask after delete", err)
	wantNotFound(t, "DeleteTask twice", f.DeleteTask(ctx, tk.OrgID, "x"))
}

func testTaskClaimLeases(t *testing.T, f *fixture) {
	ctx := t.Context()
	now := claimEpoch
	f.drainTasks(t, now.Add(time.Hour))
	f.mustCreateTask(t, f.newTask("due1", now.Add(-time.Minute)))
	f.mustCreateTask(t, f.newTask("due2", now))
	f.mustCreateTask(t, f.newTask("future", now.Add(time.Second)))
	paused := f.newTask("paused", now.Add(-time.Hour))
	paused.State = store.TaskPaused
	f.mustCreateTask(t, paused)
	claim := store.TaskClaim{Now: now, Owner: "replica-a", Lease: time.Minute, Limit: 10}
	got, err := f.ClaimDueTasks(ctx, claim)
	if err != nil {
		t.Fatalf("ClaimDueTasks: %v", err)
	}
	if d := diff([]string{"due1", "due2"}, taskIDs(got)); d != "" {
		t.Fatalf("claimed (-want +got):\n%s", d)
	}
	for _, tk := range got {
		if tk.LeaseOwner != "replica-a" || !tk.LeaseUntil.Equal(now.Add(time.Minute)) || tk.Attempts != 1 {
			t.Errorf("claimed %s: owner %q until %v attempts %d", tk.ID, tk.LeaseOwner, tk.LeaseUntil, tk.Attempts)
		}
	}
	claim.Owner = "replica-b"
	if again, err := f.ClaimDueTasks(ctx, claim); err != nil || len(again) != 0 {
		t.Errorf("a claim while the leases hold took %v (%v)", taskIDs(again), err)
	}
	claim.Now = now.Add(time.Minute) // the leases end; "future" is due
	again, err := f.ClaimDueTasks(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff([]string{"due1", "due2", "future"}, taskIDs(again)); d != "" {
		t.Errorf("claimed after the leases passed (-want +got):\n%s", d)
	}
	if again[0].Attempts != 2 || again[0].LeaseOwner != "replica-b" {
		t.Errorf("a retaken run: attempts %d owner %q, want 2 and replica-b", again[0].Attempts, again[0].LeaseOwner)
	}
	if err := f.RenewTaskLease(ctx, again[0].OrgID, "due1", "replica-a", now.Add(time.Hour)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("the first claimer renewing a lease taken over: %v, want ErrLeaseLost", err)
	}
	for _, bad := range []store.TaskClaim{{Now: now, Owner: "", Lease: time.Minute, Limit: 1},
		{Now: now, Owner: "x", Lease: 0, Limit: 1}, {Now: now, Owner: "x", Lease: time.Minute, Limit: 0}} {
		if _, err := f.ClaimDueTasks(ctx, bad); !errors.Is(err, store.ErrTaskInvalid) {
			t.Errorf("claim %+v: %v, want ErrTaskInvalid", bad, err)
		}
	}
	f.drainTasks(t, now.Add(time.Hour))
}

func testTaskConcurrentClaims(t *testing.T, f *fixture) {
	now := claimEpoch.Add(24 * time.Hour)
	f.drainTasks(t, now.Add(time.Hour))
	const n = 120
	for i := range n {
		tk := f.newTask(fmt.Sprintf("c%03d", i), now.Add(-time.Duration(i)*time.Second))
		tk.UserID = f.id(fmt.Sprintf("user-%d", i%10)) // under the person's cap
		f.mustCreateTask(t, tk)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for r := range 6 {
		owner := fmt.Sprintf("replica-%d", r)
		wg.Go(func() {
			for {
				got, err := f.ClaimDueTasks(t.Context(), store.TaskClaim{Now: now, Owner: owner, Lease: time.Hour, Limit: 7})
				if err != nil {
					t.Errorf("%s: claim: %v", owner, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, tk := range got {
					if prev, ok := seen[tk.ID]; ok {
						t.Errorf("%s claimed by %s and %s", tk.ID, prev, owner)
					}
					seen[tk.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d of %d due tasks claimed", len(seen), n)
	}
	f.drainTasks(t, now.Add(2*time.Hour))
}

func testTaskFinish(t *testing.T, f *fixture) {
	ctx := t.Context()
	now := claimEpoch.Add(48 * time.Hour)
	f.drainTasks(t, now.Add(time.Hour))
	f.mustCreateTask(t, f.newTask("again", now))
	once := f.newTask("once", now)
	once.Kind, once.Spec = store.ScheduleOnce, now.Format(time.RFC3339)
	f.mustCreateTask(t, once)
	f.mustCreateTask(t, f.newTask("edited", now))
	f.mustCreateTask(t, f.newTask("rescheduled", now))
	pausedOnce := once
	pausedOnce.ID = "paused-once"
	f.mustCreateTask(t, pausedOnce)
	got, err := f.ClaimDueTasks(ctx, store.TaskClaim{Now: now, Owner: "a", Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 5 {
		t.Fatalf("claim: %v, %v", taskIDs(got), err)
	}
	org := got[0].OrgID
	// While they run, a person changes one's words, gives another a new
	// time, and pauses a one-off.
	instr := "Ask Ana, gently."
	if _, err := f.UpdateTask(ctx, org, "edited", 0, store.TaskUpdate{Instruction: &instr}); err != nil {
		t.Fatal(err)
	}
	moved := now.Add(10 * time.Hour)
	if _, err := f.UpdateTask(ctx, org, "rescheduled", 0, store.TaskUpdate{NextRunAt: &moved}); err != nil {
		t.Fatal(err)
	}
	paused := store.TaskPaused
	if _, err := f.UpdateTask(ctx, org, "paused-once", 0, store.TaskUpdate{State: &paused}); err != nil {
		t.Fatal(err)
	}
	next := now.Add(3 * time.Hour)
	fin := store.TaskFinish{DueAt: now, RanAt: now.Add(2 * time.Second), Next: next, Status: store.TaskRunOK,
		TurnID: "turn-1", Late: 0, Started: true}
	if err := f.FinishTaskRun(ctx, org, "again", "b", fin); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a finish by another owner: %v, want ErrLeaseLost", err)
	}
	for _, id := range []string{"again", "edited", "rescheduled"} {
		if err := f.FinishTaskRun(ctx, org, id, "a", fin); err != nil {
			t.Fatalf("FinishTaskRun %s: %v", id, err)
		}
	}
	fin.Next, fin.Status, fin.Error, fin.Late = time.Time{}, store.TaskRunFailed, "the model was down", 90*time.Second
	for _, id := range []string{"once", "paused-once"} {
		if err := f.FinishTaskRun(ctx, org, id, "a", fin); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := f.GetTask(ctx, org, "again")
	if !a.NextRunAt.Equal(next) || a.LeaseOwner != "" || !a.LeaseUntil.IsZero() || a.Attempts != 0 || a.Runs != 1 ||
		a.LastStatus != store.TaskRunOK || a.LastTurnID != "turn-1" || !a.LastDueAt.Equal(now) || a.State != store.TaskActive {
		t.Errorf("finished recurring task %+v", a)
	}
	e, _ := f.GetTask(ctx, org, "edited")
	if !e.NextRunAt.Equal(next) || e.Instruction != instr || e.Runs != 1 || e.LeaseOwner != "" {
		t.Errorf("a finish after an edit of the words moves the task on and keeps the words: %+v", e)
	}
	r, _ := f.GetTask(ctx, org, "rescheduled")
	if !r.NextRunAt.Equal(moved) || r.Runs != 1 {
		t.Errorf("a finish after a new time keeps the person's time %v: %+v", moved, r)
	}
	o, _ := f.GetTask(ctx, org, "once")
	if o.State != store.TaskDone || !o.NextRunAt.IsZero() || o.LastStatus != store.TaskRunFailed ||
		o.LastError != "the model was down" || o.LastLate != 90*time.Second {
		t.Errorf("finished one-off task %+v", o)
	}
	if p, _ := f.GetTask(ctx, org, "paused-once"); p.State != store.TaskDone || !p.NextRunAt.IsZero() {
		t.Errorf("a one-off paused while it ran is done, not resumable to run again: %+v", p)
	}
	// Nothing is due again at the time that ran.
	if more, _ := f.ClaimDueTasks(ctx, store.TaskClaim{Now: now.Add(time.Minute), Owner: "b", Lease: time.Minute, Limit: 10}); len(more) != 0 {
		t.Errorf("finished runs were claimed again: %v", taskIDs(more))
	}
	if err := f.FinishTaskRun(ctx, org, "again", "a", store.TaskFinish{Status: "great"}); !errors.Is(err, store.ErrTaskInvalid) {
		t.Errorf("an unknown status: %v, want ErrTaskInvalid", err)
	}
	f.drainTasks(t, now.Add(24*time.Hour))
}

func testTaskRetryRenew(t *testing.T, f *fixture) {
	ctx := t.Context()
	now := claimEpoch.Add(72 * time.Hour)
	f.drainTasks(t, now.Add(time.Hour))
	f.mustCreateTask(t, f.newTask("busy", now))
	got, err := f.ClaimDueTasks(ctx, store.TaskClaim{Now: now, Owner: "a", Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %v, %v", taskIDs(got), err)
	}
	org := got[0].OrgID
	if err := f.RenewTaskLease(ctx, org, "busy", "a", now.Add(10*time.Minute)); err != nil {
		t.Fatalf("RenewTaskLease: %v", err)
	}
	if more, _ := f.ClaimDueTasks(ctx, store.TaskClaim{Now: now.Add(5 * time.Minute), Owner: "b", Lease: time.Minute, Limit: 10}); len(more) != 0 {
		t.Errorf("a renewed lease was taken: %v", taskIDs(more))
	}
	if err := f.RetryTask(ctx, org, "busy", "a", now.Add(30*time.Second)); err != nil {
		t.Fatalf("RetryTask: %v", err)
	}
	if more, _ := f.ClaimDueTasks(ctx, store.TaskClaim{Now: now.Add(29 * time.Second), Owner: "b", Lease: time.Minute, Limit: 10}); len(more) != 0 {
		t.Errorf("a retried run was taken before its time: %v", taskIDs(more))
	}
	more, err := f.ClaimDueTasks(ctx, store.TaskClaim{Now: now.Add(30 * time.Second), Owner: "b", Lease: time.Minute, Limit: 10})
	if err != nil || len(more) != 1 || more[0].Attempts != 1 {
		t.Errorf("the retried run at its time: %+v, %v; want it with one attempt (the retry not counted)", more, err)
	}
	if err := f.RetryTask(ctx, org, "busy", "a", now); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a retry by a claimer that lost the lease: %v, want ErrLeaseLost", err)
	}
	f.drainTasks(t, now.Add(time.Hour))
}

func testTaskNextDue(t *testing.T, f *fixture) {
	ctx := t.Context()
	now := claimEpoch.Add(96 * time.Hour)
	f.drainTasks(t, now.Add(time.Hour))
	// Other checks' tasks may be due before, and the seeds' paused ones
	// never: the earliest is at most the one created here.
	f.mustCreateTask(t, f.newTask("soon", now.Add(time.Hour+time.Minute)))
	next, ok, err := f.NextTaskDue(ctx)
	if err != nil || !ok || next.After(now.Add(time.Hour+time.Minute)) {
		t.Errorf("NextTaskDue = %v, %v, %v; want at most the new task's", next, ok, err)
	}
	wantUTC(t, "next due", next)
	f.drainTasks(t, now.Add(2*time.Hour))
}

func testTaskListCapped(t *testing.T, f *fixture) {
	// Every live task the organisation may hold, then finished ones past
	// the list's bound.
	n := 0
	for u := 0; n < store.MaxTaskList+8; u++ {
		for i := range store.MaxDoneTasksPerUser - 1 {
			tk := f.newTask(fmt.Sprintf("t%03d-%02d", u, i), at(30))
			tk.UserID = f.id(fmt.Sprintf("user-%03d", u))
			if n >= store.MaxTasksPerOrg {
				tk.State, tk.NextRunAt = store.TaskDone, time.Time{}
			} else if i >= store.MaxTasksPerUser {
				continue
			}
			f.mustCreateTask(t, tk)
			n++
		}
	}
	list, err := f.ListTasks(t.Context(), f.id("org"), store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != store.MaxTaskList || list[0].State != store.TaskActive || list[len(list)-1].State != store.TaskDone {
		t.Errorf("a list of %d tasks holds %d (first %s, last %s), want the %d bound with the live ones first",
			n, len(list), list[0].State, list[len(list)-1].State, store.MaxTaskList)
	}
}
