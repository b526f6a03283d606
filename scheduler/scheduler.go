package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TaskStore is the part of store.Tasks a scheduler uses.
type TaskStore interface {
	ClaimDueTasks(ctx context.Context, c store.TaskClaim) ([]store.Task, error)
	RenewTaskLease(ctx context.Context, orgID, id, owner string, until time.Time) error
	RetryTask(ctx context.Context, orgID, id, owner string, at time.Time) error
	FinishTaskRun(ctx context.Context, orgID, id, owner string, f store.TaskFinish) error
	NextTaskDue(ctx context.Context) (time.Time, bool, error)
}

// Run is one due run of a task, as handed to a Runner.
type Run struct {
	// Task is the task as claimed.
	Task store.Task
	// Due is the time the run was due; Late how much later it started
	// (zero when within the scheduler's grace).
	Due  time.Time
	Late time.Duration
	// Key identifies the due run across retries (the task and its due
	// time): what the runner sends as an idempotency key where a surface
	// takes one, so a retry after a crash does not post twice.
	Key string
	// Attempt counts the claims of this due run, from 1.
	Attempt int
}

// Runner runs a due run as a turn and returns the turn's id. Its error
// ErrBusy hands the run back to be retried shortly; a *SkipError records
// the run skipped (its person is disabled, its conversation gone);
// another error records it failed. When ctx ends (the scheduler stops,
// or its lease was lost) the run is left to the lease: another scheduler
// retries it.
type Runner interface {
	RunTask(ctx context.Context, r Run) (turnID string, err error)
}

// ErrBusy is a Runner's answer when the task's conversation has a turn
// running: the run is retried after Config.RetryBusy, the attempt not
// counted.
var ErrBusy = errors.New("the conversation has a turn running")

// SkipError is a Runner's answer for a run that is not to start at all,
// with the reason recorded on the task.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Config configures a Scheduler. Tasks, Runner and Owner are required.
type Config struct {
	Tasks  TaskStore
	Runner Runner
	// Owner names this scheduler in leases: unique per replica.
	Owner string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Lease is how long a claim holds before another scheduler may take
	// the run (renewed every third of it while the run goes on); zero is
	// two minutes.
	Lease time.Duration
	// Poll bounds how long the scheduler sleeps before looking for due
	// tasks again (another replica may have added one); zero is 500ms.
	Poll time.Duration
	// Workers is how many runs go on at once; zero is 4.
	Workers int
	// Grace is how late a run may start and still count as on time; zero
	// is one minute.
	Grace time.Duration
	// RetryBusy is how long a run whose conversation was busy waits;
	// zero is 30 seconds.
	RetryBusy time.Duration
	// Logger logs runs and failures; nil is slog.Default().
	Logger *slog.Logger
}

// Scheduler claims due runs and runs them, until its context ends.
type Scheduler struct {
	cfg  Config
	wake chan struct{}
	// slots holds a token per run going on.
	slots chan struct{}
	wg    sync.WaitGroup
}

// New returns a Scheduler for cfg, its zero fields defaulted.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Tasks == nil || cfg.Runner == nil || cfg.Owner == "" {
		return nil, errors.New("scheduler: Tasks, Runner and Owner are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Grace <= 0 {
		cfg.Grace = time.Minute
	}
	if cfg.RetryBusy <= 0 {
		cfg.RetryBusy = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{cfg: cfg, wake: make(chan struct{}, 1), slots: make(chan struct{}, cfg.Workers)}, nil
}

// Wake makes a sleeping scheduler look for due tasks now: a task was
// created or changed on this replica.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run claims and runs due tasks until ctx ends, then waits for the runs
// going on (their contexts ended too, so they stop and leave their
// leases to lapse).
func (s *Scheduler) Run(ctx context.Context) {
	defer s.wg.Wait()
	for {
		claimed, err := s.Tick(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.cfg.Logger.Warn("scheduler: claim due tasks", "err", err)
		}
		wait := s.cfg.Poll
		if claimed == 0 && err == nil {
			if next, ok, err := s.cfg.Tasks.NextTaskDue(ctx); err == nil && ok {
				wait = min(wait, max(next.Sub(s.cfg.Now()), 0))
			}
		}
		if claimed == 0 {
			// Never spin: a due time a moment ago that no claim found
			// free is taken on the next look.
			wait = max(wait, 5*time.Millisecond)
		}
		s.sleep(ctx, wait, claimed > 0)
	}
}

// sleep waits for wait, a Wake, ctx's end or, when busy (every slot was
// just filled), a slot coming free.
func (s *Scheduler) sleep(ctx context.Context, wait time.Duration, busy bool) {
	if busy && len(s.slots) < cap(s.slots) {
		return // room left: claim again at once
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	case <-s.wake:
	}
}

// Tick claims as many due runs as there are free workers and starts
// them, returning how many it started.
func (s *Scheduler) Tick(ctx context.Context) (int, error) {
	free := cap(s.slots) - len(s.slots)
	if free == 0 {
		return 0, nil
	}
	now := s.cfg.Now()
	tasks, err := s.cfg.Tasks.ClaimDueTasks(ctx, store.TaskClaim{Now: now, Owner: s.cfg.Owner, Lease: s.cfg.Lease, Limit: free})
	if err != nil {
		return 0, fmt.Errorf("scheduler: %w", err)
	}
	for _, t := range tasks {
		s.slots <- struct{}{}
		s.wg.Go(func() {
			defer func() { <-s.slots; s.Wake() }()
			s.process(ctx, t)
		})
	}
	return len(tasks), nil
}

// Wait waits for the runs started so far to end.
func (s *Scheduler) Wait() { s.wg.Wait() }

// RunKey is the idempotency key of a task's run due at due.
func RunKey(t store.Task, due time.Time) string {
	return t.OrgID + "/" + t.ID + "@" + due.UTC().Format(time.RFC3339)
}

// process runs one claimed task and records its end.
func (s *Scheduler) process(ctx context.Context, t store.Task) {
	log := s.cfg.Logger.With("org", t.OrgID, "task", t.ID)
	start := s.cfg.Now()
	run := Run{Task: t, Due: t.NextRunAt, Key: RunKey(t, t.NextRunAt), Attempt: t.Attempts}
	if late := start.Sub(run.Due); late > s.cfg.Grace {
		run.Late = late
	}
	fin := store.TaskFinish{DueAt: run.Due, RanAt: start, Late: run.Late}
	if t.Attempts > store.MaxTaskAttempts {
		fin.Status = store.TaskRunFailed
		fin.Error = fmt.Sprintf("gave up after %d attempts: each was interrupted before it finished", store.MaxTaskAttempts)
		s.finish(ctx, log, t, fin)
		return
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := s.keepLease(rctx, t, cancel)
	turnID, err := s.cfg.Runner.RunTask(rctx, run)
	stop()
	var skip *SkipError
	switch {
	case err != nil && rctx.Err() != nil:
		// Stopping, or the lease was lost: another scheduler takes the
		// run when the lease lapses.
		log.Info("scheduler: run interrupted; left to the lease", "cause", context.Cause(rctx))
		return
	case errors.Is(err, ErrBusy):
		if err := s.cfg.Tasks.RetryTask(ctx, t.OrgID, t.ID, s.cfg.Owner, s.cfg.Now().Add(s.cfg.RetryBusy)); err != nil {
			log.Warn("scheduler: hand back a busy run", "err", err)
		}
		return
	case errors.As(err, &skip):
		fin.Status, fin.Error = store.TaskRunSkipped, skip.Reason
	case err != nil:
		fin.Status, fin.Error, fin.Started, fin.TurnID = store.TaskRunFailed, err.Error(), true, turnID
	default:
		fin.Status, fin.Started, fin.TurnID = store.TaskRunOK, true, turnID
	}
	s.finish(ctx, log, t, fin)
}

// finish records fin with the task's next due time.
func (s *Scheduler) finish(ctx context.Context, log *slog.Logger, t store.Task, fin store.TaskFinish) {
	fin.Next = Next(t, s.cfg.Now())
	// A run that ended is recorded even when the scheduler is stopping.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.cfg.Tasks.FinishTaskRun(ctx, t.OrgID, t.ID, s.cfg.Owner, fin); err != nil {
		log.Warn("scheduler: record the run", "err", err)
		return
	}
	log.Info("scheduler: ran task", "status", fin.Status, "late", fin.Late, "turn", fin.TurnID, "next", fin.Next)
}

// errLeaseLost is the cause of a run's cancellation when its lease could
// not be renewed.
var errLeaseLost = errors.New("scheduler: the task's lease was lost")

// keepLease renews t's lease every third of the lease while the run goes
// on, cancelling it when the lease is lost, or when renewals have failed
// (the database unreachable) until the last granted lease is about to
// pass, so that a run never goes on past a lease another scheduler may
// take; stop ends the renewals.
func (s *Scheduler) keepLease(ctx context.Context, t store.Task, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(s.cfg.Lease / 3)
		defer tick.Stop()
		held := t.LeaseUntil // the end of the last lease granted
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				until := s.cfg.Now().Add(s.cfg.Lease)
				err := s.cfg.Tasks.RenewTaskLease(ctx, t.OrgID, t.ID, s.cfg.Owner, until)
				switch {
				case err == nil:
					held = until
				case errors.Is(err, store.ErrLeaseLost):
					cancel(errLeaseLost)
					return
				case !s.cfg.Now().Before(held.Add(-s.cfg.Lease / 3)):
					// Another renewal could only come after the lease
					// passed: stop now rather than run past it.
					cancel(fmt.Errorf("%w: renewals failed: %v", errLeaseLost, err))
					return
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
