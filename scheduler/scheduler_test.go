package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
)

// backends runs f on SQLite and on PostgreSQL (skipped without a server
// unless QUIVER_REQUIRE_PEERS says it must run).
func backends(t *testing.T, f func(t *testing.T, st store.Tasks)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(t.Context(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		f(t, st)
	})
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// runner records runs; block, when set, makes runs of those tasks wait
// for their context to end (after saying they started on started).
type runner struct {
	mu      sync.Mutex
	runs    []scheduler.Run
	by      map[string]string // run key → scheduler
	block   map[string]bool
	started chan string
	answer  func(scheduler.Run) error
	name    string
}

func (r *runner) RunTask(ctx context.Context, run scheduler.Run) (string, error) {
	r.mu.Lock()
	r.runs = append(r.runs, run)
	blocked := r.block[run.Task.ID]
	answer := r.answer
	r.mu.Unlock()
	if r.started != nil {
		r.started <- run.Task.ID
	}
	if blocked {
		<-ctx.Done()
		return "", ctx.Err()
	}
	if answer != nil {
		if err := answer(run); err != nil {
			return "", err
		}
	}
	return "turn-" + run.Task.ID + "-" + fmt.Sprint(run.Attempt), nil
}

func (r *runner) all() []scheduler.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]scheduler.Run(nil), r.runs...)
}

var epoch = time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)

func newTask(i int, due time.Time) store.Task {
	return store.Task{OrgID: "org", ID: fmt.Sprintf("task-%04d", i), UserID: fmt.Sprintf("user-%d", i%40), Agent: "assistant",
		ConversationID: fmt.Sprintf("conv-%d", i), Title: "Check in", Instruction: "Ask how they are.",
		Kind: store.ScheduleInterval, Every: time.Hour, Timezone: "UTC", State: store.TaskActive, NextRunAt: due,
		CreatedAt: epoch, UpdatedAt: epoch}
}

func mustCreate(t *testing.T, st store.Tasks, tasks ...store.Task) {
	t.Helper()
	for _, tk := range tasks {
		if _, err := st.CreateTask(t.Context(), tk); err != nil {
			t.Fatalf("CreateTask %s: %v", tk.ID, err)
		}
	}
}

func newScheduler(t *testing.T, st store.Tasks, r scheduler.Runner, owner string, c *clock) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{Tasks: st, Runner: r, Owner: owner, Now: c.Now, Workers: 8, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drive ticks s until a tick claims nothing, waiting for the runs each
// tick started.
func drive(t *testing.T, ctx context.Context, s *scheduler.Scheduler) int {
	t.Helper()
	total := 0
	for {
		n, err := s.Tick(ctx)
		if err != nil {
			t.Errorf("tick: %v", err)
			return total
		}
		s.Wait()
		if n == 0 {
			return total
		}
		total += n
	}
}

// TestTwoSchedulersRunEachDueRunOnce races two schedulers, as two
// replicas, for 300 due tasks: each runs once.
func TestTwoSchedulersRunEachDueRunOnce(t *testing.T) {
	backends(t, func(t *testing.T, st store.Tasks) {
		const n = 300
		for i := range n {
			mustCreate(t, st, newTask(i, epoch.Add(-time.Duration(i%7)*time.Second)))
		}
		c := &clock{t: epoch}
		r := &runner{}
		a, b := newScheduler(t, st, r, "replica-a", c), newScheduler(t, st, r, "replica-b", c)
		var wg sync.WaitGroup
		counts := make([]int, 2)
		for i, s := range []*scheduler.Scheduler{a, b} {
			wg.Go(func() { counts[i] = drive(t, t.Context(), s) })
		}
		wg.Wait()
		seen := map[string]int{}
		for _, run := range r.all() {
			seen[run.Task.ID]++
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("%s ran %d times", id, k)
			}
		}
		if len(seen) != n || counts[0]+counts[1] != n {
			t.Errorf("%d tasks ran (%d by a, %d by b), want %d", len(seen), counts[0], counts[1], n)
		}
		list, _ := st.ListTasks(t.Context(), "org", store.TaskFilter{})
		for _, tk := range list {
			if tk.LastStatus != store.TaskRunOK || tk.Runs != 1 || !tk.NextRunAt.After(epoch) || tk.LeaseOwner != "" {
				t.Fatalf("after its run: %+v", tk)
			}
		}
	})
}

// TestRestartRetriesTheRunWithItsKey stops a scheduler mid-run, as a
// replica dying: the run stays leased until the lease passes, then
// another scheduler runs it again under the same idempotency key.
func TestRestartRetriesTheRunWithItsKey(t *testing.T) {
	backends(t, func(t *testing.T, st store.Tasks) {
		mustCreate(t, st, newTask(1, epoch))
		c := &clock{t: epoch}
		dying := &runner{block: map[string]bool{"task-0001": true}, started: make(chan string, 1)}
		a := newScheduler(t, st, dying, "replica-a", c)
		ctx, stop := context.WithCancel(t.Context())
		if n, err := a.Tick(ctx); n != 1 || err != nil {
			t.Fatalf("tick: %d, %v", n, err)
		}
		<-dying.started
		stop() // the replica dies mid-run
		a.Wait()
		r := &runner{}
		b := newScheduler(t, st, r, "replica-b", c)
		if n := drive(t, t.Context(), b); n != 0 {
			t.Fatalf("the run was taken while its lease held (%d)", n)
		}
		c.Set(epoch.Add(time.Minute)) // the lease passes
		if n := drive(t, t.Context(), b); n != 1 {
			t.Fatalf("the run was not retried after the lease (%d)", n)
		}
		first, again := dying.all()[0], r.all()[0]
		if first.Key != again.Key || again.Attempt != 2 || first.Attempt != 1 {
			t.Errorf("first run key %q attempt %d, retry key %q attempt %d; want one key, attempts 1 and 2",
				first.Key, first.Attempt, again.Key, again.Attempt)
		}
		tk, _ := st.GetTask(t.Context(), "org", "task-0001")
		if tk.Runs != 1 || tk.LastTurnID != "turn-task-0001-2" || tk.Attempts != 0 {
			t.Errorf("after the retry: runs %d turn %q attempts %d", tk.Runs, tk.LastTurnID, tk.Attempts)
		}
	})
}

// TestMissedRunsRunOnceLate starts the scheduler five and a half hours
// after an hourly task was due: it runs once, says how late, and is next
// due on its hour after now.
func TestMissedRunsRunOnceLate(t *testing.T) {
	backends(t, func(t *testing.T, st store.Tasks) {
		mustCreate(t, st, newTask(1, epoch))
		c := &clock{t: epoch.Add(5*time.Hour + 30*time.Minute)}
		r := &runner{}
		if n := drive(t, t.Context(), newScheduler(t, st, r, "a", c)); n != 1 {
			t.Fatalf("%d runs, want one", n)
		}
		run := r.all()[0]
		if run.Late != 5*time.Hour+30*time.Minute || !run.Due.Equal(epoch) {
			t.Errorf("run due %v late %v", run.Due, run.Late)
		}
		tk, _ := st.GetTask(t.Context(), "org", "task-0001")
		if !tk.NextRunAt.Equal(epoch.Add(6*time.Hour)) || tk.LastLate != run.Late {
			t.Errorf("next %v late %v; want %v and the run's lateness", tk.NextRunAt, tk.LastLate, epoch.Add(6*time.Hour))
		}
	})
}

// TestRunOutcomes covers what a runner may answer.
func TestRunOutcomes(t *testing.T) {
	backends(t, func(t *testing.T, st store.Tasks) {
		once := newTask(2, epoch)
		once.Kind, once.Spec, once.Every = store.ScheduleOnce, epoch.Format(time.RFC3339), 0
		mustCreate(t, st, newTask(1, epoch), once, newTask(3, epoch), newTask(4, epoch))
		c := &clock{t: epoch}
		busyOnce := true
		r := &runner{answer: func(run scheduler.Run) error {
			switch run.Task.ID {
			case "task-0001":
				if busyOnce {
					busyOnce = false
					return scheduler.ErrBusy
				}
			case "task-0003":
				return &scheduler.SkipError{Reason: "the person is disabled"}
			case "task-0004":
				return errors.New("the model answered 500")
			}
			return nil
		}}
		s := newScheduler(t, st, r, "a", c)
		drive(t, t.Context(), s)
		get := func(id string) store.Task {
			tk, err := st.GetTask(t.Context(), "org", id)
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}
		if tk := get("task-0001"); tk.Runs != 0 || tk.Attempts != 0 || !tk.LeaseUntil.Equal(epoch.Add(30*time.Second)) {
			t.Errorf("busy: runs %d attempts %d lease until %v; want it handed back for 30s, uncounted", tk.Runs, tk.Attempts, tk.LeaseUntil)
		}
		c.Set(epoch.Add(30 * time.Second))
		drive(t, t.Context(), s)
		if tk := get("task-0001"); tk.Runs != 1 || tk.LastStatus != store.TaskRunOK {
			t.Errorf("busy, retried: %+v", tk)
		}
		if tk := get("task-0002"); tk.State != store.TaskDone || !tk.NextRunAt.IsZero() || tk.LastStatus != store.TaskRunOK {
			t.Errorf("one-off: state %s next %v status %s", tk.State, tk.NextRunAt, tk.LastStatus)
		}
		if tk := get("task-0003"); tk.LastStatus != store.TaskRunSkipped || tk.LastError != "the person is disabled" || tk.Runs != 0 ||
			!tk.NextRunAt.Equal(epoch.Add(time.Hour)) {
			t.Errorf("skipped: %+v", tk)
		}
		if tk := get("task-0004"); tk.LastStatus != store.TaskRunFailed || tk.LastError != "the model answered 500" || tk.Runs != 1 {
			t.Errorf("failed: %+v", tk)
		}
	})
}

// TestGivesUpAfterMaxAttempts leaves a run interrupted three times: the
// fourth claim records it failed and moves on.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	st, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mustCreate(t, st, newTask(1, epoch))
	c := &clock{t: epoch}
	for i := range store.MaxTaskAttempts {
		r := &runner{block: map[string]bool{"task-0001": true}, started: make(chan string, 1)}
		s := newScheduler(t, st, r, fmt.Sprintf("dies-%d", i), c)
		ctx, stop := context.WithCancel(t.Context())
		if n, _ := s.Tick(ctx); n != 1 {
			t.Fatalf("attempt %d not claimed", i+1)
		}
		<-r.started
		stop()
		s.Wait()
		c.Set(c.Now().Add(time.Minute))
	}
	r := &runner{}
	drive(t, t.Context(), newScheduler(t, st, r, "last", c))
	if len(r.all()) != 0 {
		t.Errorf("the runner was called a fourth time")
	}
	tk, _ := st.GetTask(t.Context(), "org", "task-0001")
	if tk.LastStatus != store.TaskRunFailed || tk.Attempts != 0 || !tk.NextRunAt.After(epoch) {
		t.Errorf("after giving up: %+v", tk)
	}
}

// TestLoopWakesWhenDue runs the scheduler's loop on a fake clock
// (testing/synctest) over SQLite: a task due in ten minutes starts within
// the poll interval of its time, one another replica adds is found by
// the poll, and stopping leaves nothing running.
func TestLoopWakesWhenDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := context.WithCancel(t.Context())
		st, err := sqlite.Open(ctx, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		now := time.Now()
		mustCreate(t, st, newTask(1, now.Add(10*time.Minute)))
		var mu sync.Mutex
		startedAt := map[string]time.Time{}
		r := &runner{answer: func(run scheduler.Run) error {
			mu.Lock()
			startedAt[run.Task.ID] = time.Now()
			mu.Unlock()
			return nil
		}}
		s, err := scheduler.New(scheduler.Config{Tasks: st, Runner: r, Owner: "a", Poll: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		time.Sleep(10*time.Minute + time.Second)
		other := newTask(2, now.Add(20*time.Minute))
		mustCreate(t, st, other) // no Wake: as if another replica added it
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for id, due := range map[string]time.Time{"task-0001": now.Add(10 * time.Minute), "task-0002": now.Add(20 * time.Minute)} {
			at, ok := startedAt[id]
			if !ok {
				t.Fatalf("%s never started", id)
			}
			if d := at.Sub(due); d < 0 || d > 500*time.Millisecond {
				t.Errorf("%s started %v after it was due, want within the poll interval", id, d)
			}
		}
	})
}

// TestDailyTaskAcrossDaylightSaving runs a daily 09:00 Paris task through
// the scheduler over the night the clocks go forward: it runs at 08:00
// UTC the day before and at 07:00 UTC the day after, once each.
func TestDailyTaskAcrossDaylightSaving(t *testing.T) {
	st, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first := time.Date(2026, 3, 28, 8, 0, 0, 0, time.UTC) // Saturday 09:00 CET
	tk := newTask(1, first)
	tk.Kind, tk.Spec, tk.Every, tk.Timezone = store.ScheduleCron, "0 9 * * *", 0, "Europe/Paris"
	mustCreate(t, st, tk)
	c := &clock{t: first}
	r := &runner{}
	s := newScheduler(t, st, r, "a", c)
	for _, at := range []time.Time{first, time.Date(2026, 3, 29, 7, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)} {
		c.Set(at.Add(-time.Second))
		if n := drive(t, t.Context(), s); n != 0 {
			t.Fatalf("ran %d runs a second before %v", n, at)
		}
		c.Set(at)
		if n := drive(t, t.Context(), s); n != 1 {
			t.Fatalf("ran %d runs at %v, want one", n, at)
		}
	}
	var dues []time.Time
	for _, run := range r.all() {
		dues = append(dues, run.Due)
	}
	want := []time.Time{first, time.Date(2026, 3, 29, 7, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)}
	if len(dues) != 3 || !dues[0].Equal(want[0]) || !dues[1].Equal(want[1]) || !dues[2].Equal(want[2]) {
		t.Errorf("due times %v, want %v", dues, want)
	}
}

// failingRenewals fails every renewal as an unreachable database would.
type failingRenewals struct {
	store.Tasks
	failed chan struct{}
}

func (f failingRenewals) RenewTaskLease(context.Context, string, string, string, time.Time) error {
	select {
	case f.failed <- struct{}{}:
	default:
	}
	return errors.New("connection refused")
}

// TestRunStopsBeforeItsLeaseWhenRenewalsFail: with the database
// unreachable for renewals, a run is stopped before the lease it holds
// passes, so another scheduler taking it then never runs beside it.
func TestRunStopsBeforeItsLeaseWhenRenewalsFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		now := time.Now()
		mustCreate(t, st, newTask(1, now))
		stopped := make(chan time.Time, 1)
		fs := failingRenewals{Tasks: st, failed: make(chan struct{}, 1)}
		s, err := scheduler.New(scheduler.Config{Tasks: fs, Runner: runnerFunc(func(ctx context.Context, run scheduler.Run) (string, error) {
			<-ctx.Done()
			stopped <- time.Now()
			return "", ctx.Err()
		}), Owner: "a", Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.Tick(t.Context()); n != 1 || err != nil {
			t.Fatalf("tick: %d %v", n, err)
		}
		at := <-stopped
		s.Wait()
		if d := at.Sub(now); d >= time.Minute {
			t.Errorf("the run went on %v, past its one-minute lease", d)
		}
		if d := at.Sub(now); d < 20*time.Second {
			t.Errorf("the run stopped after %v, before any renewal was tried", d)
		}
	})
}

// runnerFunc is a Runner of a function.
type runnerFunc func(ctx context.Context, run scheduler.Run) (string, error)

func (f runnerFunc) RunTask(ctx context.Context, run scheduler.Run) (string, error) {
	return f(ctx, run)
}
