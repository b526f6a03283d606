// Package runs holds the conversations' running turns across the
// replicas of `quiver serve`: each turn claims its conversation under a
// lease (store.Runs) that this process renews with a heartbeat, a cancel
// request reaches the turn from any replica, the turns of a replica that
// died are reaped by the survivors, and every turn's events are recorded
// (store.TurnEvents), coalesced, so that a reader on any replica can
// follow or resume the stream from a cursor.
package runs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// Defaults of Config's durations.
const (
	DefaultLease     = 30 * time.Second
	DefaultHeartbeat = 2 * time.Second
	DefaultReap      = 5 * time.Second
	DefaultRetention = time.Hour
	DefaultTextFlush = 50 * time.Millisecond
)

// Causes a run's context is cancelled with (context.Cause).
var (
	// ErrCancelled: the turn was cancelled on request (Cancel, or its
	// user disabled), from this replica or another.
	ErrCancelled = errors.New("turn cancelled on request")
	// ErrLeaseLost: this replica could not renew the run's lease in time
	// (another replica may have reaped the turn and taken the
	// conversation over), so the turn stops here.
	ErrLeaseLost = errors.New("turn's lease lost")
	// ErrStopping: the server is stopping (Registry.Loop's context ended).
	ErrStopping = errors.New("server stopping")
	// ErrRunning is Claim's error when the conversation has a running
	// turn, on any replica.
	ErrRunning = errors.New("a turn of this conversation is already running")
)

// Config is what a Registry works with. Runs and Events are required;
// a zero duration takes its default.
type Config struct {
	Runs   store.Runs
	Events store.TurnEvents
	Turns  store.Turns
	// Replica names this process in the runs it claims; "" takes a
	// random name. Two live processes must never share one.
	Replica string
	// Exclusive says this process is the only one using the database
	// (SQLite, under the server lock): every run it did not claim itself
	// is dead, and no turn runs anywhere but here.
	Exclusive bool
	// Lease is how long a claim holds without a heartbeat: a replica
	// that stops renewing loses its turns after it.
	Lease time.Duration
	// Heartbeat is how often the lease is renewed and cancel requests
	// from other replicas are picked up (a cancel sent to another replica
	// takes effect within one heartbeat).
	Heartbeat time.Duration
	// Reap is how often expired leases are reaped (their turns recorded
	// as interrupted) and old events deleted.
	Reap time.Duration
	// Retention is how long a turn's recorded events are kept.
	Retention time.Duration
	// TextFlush is how long text deltas are gathered into one recorded
	// event before it is stored and sent.
	TextFlush time.Duration
	// Now is the clock; nil means clock.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Check reports the first problem with c's durations, or nil: none
// negative, and the lease longer than two heartbeats (so one late
// heartbeat never loses a turn).
func (c Config) Check() error {
	c = c.withDefaults()
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"lease", c.Lease}, {"heartbeat", c.Heartbeat}, {"reap", c.Reap}, {"events_retention", c.Retention}, {"text_flush", c.TextFlush}} {
		if d.d <= 0 || d.d > 24*time.Hour {
			return fmt.Errorf("runs.%s: use a duration above 0 and at most 24h", d.name)
		}
	}
	if c.Lease <= 2*c.Heartbeat {
		return fmt.Errorf("runs.lease %v must be longer than two heartbeats (%v)", c.Lease, 2*c.Heartbeat)
	}
	if c.TextFlush > time.Second {
		return fmt.Errorf("runs.text_flush %v: use at most 1s (text reaches readers no later than this)", c.TextFlush)
	}
	return nil
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Lease, DefaultLease)
	def(&c.Heartbeat, DefaultHeartbeat)
	def(&c.Reap, DefaultReap)
	def(&c.Retention, DefaultRetention)
	def(&c.TextFlush, DefaultTextFlush)
	if c.Now == nil {
		c.Now = clock.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Replica == "" {
		c.Replica = "replica-" + rand.Text()[:12]
	}
	return c
}

// Registry is this process's view of the runs: the ones it holds, which
// it renews and cancels, and the ones of dead replicas, which it reaps.
// Safe for concurrent use.
type Registry struct {
	cfg Config
	// stop ends every run's context when Loop returns (the server
	// stopping).
	stop       context.Context
	stopCancel context.CancelCauseFunc

	mu sync.Mutex
	// local holds this process's runs by runKey.
	local map[string]*Run
	// claims counts claims, so a heartbeat tells runs claimed while it
	// was in flight (absent from its answer, yet not lost) apart.
	claims uint64
	// pending holds, by runKey, the turn id of a Claim under way here
	// (from before its store call until it registers the run or fails),
	// and early the turn id of a cancel that found that claim committed
	// in the store but not yet in local: the Claim cancels the run as it
	// registers it, so a cancel answered "accepted" is never left for the
	// next heartbeat. A cancel that finds no claim under way stashes
	// nothing (a run that already ended must not cancel a later claim of
	// the same turn, as answering a paused one is).
	pending, early map[string]string
}

// New returns a Registry over cfg, whose zero durations take their
// defaults. It starts nothing; Loop runs the heartbeat and the reaper.
func New(cfg Config) (*Registry, error) {
	if cfg.Runs == nil || cfg.Events == nil {
		return nil, errors.New("runs: Config needs Runs and Events")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	stop, cancel := context.WithCancelCause(context.Background())
	return &Registry{cfg: cfg.withDefaults(), stop: stop, stopCancel: cancel, local: map[string]*Run{}, pending: map[string]string{}, early: map[string]string{}}, nil
}

// Open is New followed by Recover: the registry of a server starting,
// with what the last stop cut short recorded as interrupted.
func Open(ctx context.Context, cfg Config) (*Registry, error) {
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := r.Recover(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Replica is the name this process claims runs under.
func (r *Registry) Replica() string { return r.cfg.Replica }

// Exclusive reports Config.Exclusive: no other process runs turns of
// this database.
func (r *Registry) Exclusive() bool { return r.cfg.Exclusive }

// Config is the registry's configuration with its defaults applied.
func (r *Registry) Config() Config { return r.cfg }

func runKey(orgID, conversationID string) string { return orgID + "\x00" + conversationID }

// Turn names a turn to claim its conversation for.
type Turn struct {
	OrgID, ConversationID, TurnID string
	// UserID is the turn's caller (CancelUser reaches the turn).
	UserID string
	// Continues says the turn ran before (a paused turn being answered):
	// its events are numbered on from the last one recorded, so ids never
	// repeat within a turn.
	Continues bool
}

// claimTimeout bounds a claim's store calls: they are not the request's
// (a client leaving just after the claim commits must not leave a run
// that nothing ends).
const claimTimeout = 10 * time.Second

// Claim makes t its conversation's running turn, held by this replica:
// it fails with ErrRunning when the conversation has a live run on any
// replica. A run whose lease passed is taken over, its turn recorded as
// interrupted. The returned Run's context ends when the run is cancelled
// (ErrCancelled), loses its lease (ErrLeaseLost: not renewed in time) or
// the server stops (ErrStopping); it does not end with ctx, which only
// carries the claim's values. The caller must call End once the turn is
// over.
func (r *Registry) Claim(ctx context.Context, t Turn) (*Run, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	now := r.cfg.Now()
	sr := store.Run{OrgID: t.OrgID, ConversationID: t.ConversationID, TurnID: t.TurnID, UserID: t.UserID,
		Replica: r.cfg.Replica, StartedAt: now, ExpiresAt: now.Add(r.cfg.Lease)}
	var seq int64
	if t.Continues {
		var err error
		if seq, err = r.cfg.Events.LastTurnEventSeq(ctx, t.OrgID, t.TurnID); err != nil {
			return nil, fmt.Errorf("read the turn's last event: %w", err)
		}
	}
	k := runKey(t.OrgID, t.ConversationID)
	r.mu.Lock()
	r.pending[k] = t.TurnID
	r.mu.Unlock()
	expired, err := r.cfg.Runs.ClaimRun(ctx, sr)
	if err != nil {
		r.mu.Lock()
		r.unpend(k, t.TurnID)
		r.mu.Unlock()
	}
	if errors.Is(err, store.ErrExists) {
		return nil, ErrRunning
	}
	if err != nil {
		return nil, fmt.Errorf("claim the conversation's run: %w", err)
	}
	if expired != nil {
		r.cfg.Logger.Warn("took over a conversation whose replica stopped renewing its turn",
			"conversation", t.ConversationID, "interrupted_turn", expired.TurnID, "replica", expired.Replica)
	}
	runCtx, stop := context.WithCancelCause(r.stop)
	run := &Run{reg: r, sr: sr, ctx: runCtx, cancel: stop, renewed: now}
	run.rec = newRecorder(r, sr, seq)
	// The run stops by itself when its lease passes unrenewed, whatever
	// the heartbeat is doing (a store call that hangs).
	run.watchdog = time.AfterFunc(max(sr.ExpiresAt.Sub(r.cfg.Now()), 0), func() { run.cancel(ErrLeaseLost) })
	r.mu.Lock()
	// Numbered once the claim committed, under the lock that makes it
	// local: a heartbeat whose snapshot of claims this number is within
	// started after the commit, so its renewal saw the run.
	r.claims++
	run.claim = r.claims
	if old := r.local[k]; old != nil {
		// Only possible when old lost its lease and this claim took the
		// conversation over: old stops.
		old.cancel(ErrLeaseLost)
	}
	r.local[k] = run
	if r.early[k] == sr.TurnID {
		run.cancel(ErrCancelled)
	}
	r.unpend(k, sr.TurnID)
	r.mu.Unlock()
	return run, nil
}

// Cancel asks the conversation's running turn to stop, on whichever
// replica runs it: at once when it runs here, within a heartbeat
// elsewhere. It reports false when the conversation has no running turn.
func (r *Registry) Cancel(ctx context.Context, orgID, conversationID string) (bool, error) {
	sr, err := r.cfg.Runs.RequestCancel(ctx, orgID, conversationID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("request cancel: %w", err)
	}
	k := runKey(orgID, conversationID)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch run := r.local[k]; {
	case run != nil && run.sr.TurnID == sr.TurnID:
		run.cancel(ErrCancelled)
	case r.pending[k] == sr.TurnID && sr.Replica == r.cfg.Replica:
		// The claim committed and its Claim has not registered the run
		// yet: it will, and cancels it then.
		r.early[k] = sr.TurnID
	}
	return true, nil
}

// CancelUser asks every running turn of the user to stop, on every
// replica (at once here, within a heartbeat elsewhere).
func (r *Registry) CancelUser(ctx context.Context, orgID, userID string) error {
	r.mu.Lock()
	for _, run := range r.local {
		if run.sr.OrgID == orgID && run.sr.UserID == userID {
			run.cancel(ErrCancelled)
		}
	}
	r.mu.Unlock()
	if _, err := r.cfg.Runs.RequestCancelUser(ctx, orgID, userID); err != nil {
		return fmt.Errorf("request cancel of the user's turns on other replicas: %w", err)
	}
	return nil
}

// Running reports the conversation's live run, on any replica, or false.
// A run whose lease passed at now counts as not running.
func (r *Registry) Running(ctx context.Context, orgID, conversationID string) (store.Run, bool, error) {
	sr, err := r.cfg.Runs.GetRun(ctx, orgID, conversationID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Run{}, false, nil
	}
	if err != nil {
		return store.Run{}, false, fmt.Errorf("read the conversation's run: %w", err)
	}
	return sr, !sr.ExpiresAt.Before(r.cfg.Now()), nil
}

// Local reports whether the conversation's running turn is held by this
// process; it reads nothing.
func (r *Registry) Local(orgID, conversationID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local[runKey(orgID, conversationID)] != nil
}

// unpend ends the claim of turn under way for k, if it is still the one
// pending there, with any cancel stashed for it; r.mu is held.
func (r *Registry) unpend(k, turn string) {
	if r.pending[k] == turn {
		delete(r.pending, k)
		delete(r.early, k)
	}
}

// forget drops run from the local map, if it is still there.
func (r *Registry) forget(run *Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := runKey(run.sr.OrgID, run.sr.ConversationID)
	if r.local[k] == run {
		delete(r.local, k)
	}
}

// Run is a turn this replica holds. Its methods are safe for concurrent
// use.
type Run struct {
	reg    *Registry
	sr     store.Run
	ctx    context.Context
	cancel context.CancelCauseFunc
	rec    *recorder
	// claim numbers the claim among the registry's (see Heartbeat).
	claim uint64
	// watchdog cancels the run (ErrLeaseLost) when its lease passes
	// unrenewed; each renewal moves it on.
	watchdog *time.Timer

	mu sync.Mutex
	// renewed is when the lease was last granted or renewed.
	renewed time.Time
	ended   bool
}

// Context ends when the run must stop; context.Cause says why
// (ErrCancelled, ErrLeaseLost, ErrStopping).
func (run *Run) Context() context.Context { return run.ctx }

// TurnID is the turn the run holds its conversation for.
func (run *Run) TurnID() string { return run.sr.TurnID }

// End records the events still gathered, releases the conversation (when
// the run still holds it; a turn still stored as running, its final
// write having failed, is recorded as interrupted in the same step) and
// stops the run's context. Calling it again does nothing.
func (run *Run) End() {
	run.mu.Lock()
	if run.ended {
		run.mu.Unlock()
		return
	}
	run.ended = true
	run.mu.Unlock()
	run.watchdog.Stop()
	run.rec.close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), claimTimeout)
	defer cancel()
	// A release that fails leaves the conversation held until its lease
	// passes: it may wait for a busy store as long as its timeout.
	ctx = store.WithWriteWait(ctx, claimTimeout)
	err := run.reg.cfg.Runs.EndRun(ctx, run.sr.OrgID, run.sr.ConversationID, run.sr.TurnID, run.reg.cfg.Now())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		run.reg.cfg.Logger.Error("release a conversation's run", "conversation", run.sr.ConversationID, "turn", run.sr.TurnID, "err", err)
	}
	run.reg.forget(run)
	run.cancel(nil)
}
