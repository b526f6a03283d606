package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// waker is the task tools' way to reach this process's scheduler, which
// quiver serve starts after the tools are built: Wake does nothing until
// set.
type waker struct {
	mu sync.Mutex
	fn func()
}

// Wake wakes the scheduler, when one runs.
func (w *waker) Wake() {
	w.mu.Lock()
	fn := w.fn
	w.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func (w *waker) set(fn func()) {
	w.mu.Lock()
	w.fn = fn
	w.mu.Unlock()
}

// newScheduler is quiver serve's scheduler: due runs claimed under the
// replica's name (runs.Registry's), each run as a turn of the engine in
// the task's conversation, held like a turn of the API (reg), so the
// web chat follows it and no other turn runs beside it.
func (rt *runtime) newScheduler(eng *engine.Engine, reg *runs.Registry, sc config.Scheduler, env Env) (*scheduler.Scheduler, error) {
	s, err := scheduler.New(scheduler.Config{Tasks: rt.st, Owner: reg.Replica(), Now: env.Now, Logger: env.Logger,
		Workers: sc.Workers, Poll: sc.Poll.Std(), Lease: sc.Lease.Std(), RetryBusy: sc.RetryBusy.Std(),
		Runner: &taskRunner{eng: eng, users: rt.st, messages: rt.st, runs: reg}})
	if err != nil {
		return nil, err
	}
	rt.wake.set(s.Wake)
	return s, nil
}

// taskRunner runs a task's due run as a turn (scheduler.Runner).
type taskRunner struct {
	eng   *engine.Engine
	users interface {
		GetUser(ctx context.Context, orgID, id string) (store.User, error)
	}
	messages interface {
		LastMessageSeq(ctx context.Context, orgID, conversationID string) (int64, error)
	}
	runs *runs.Registry
}

// TaskMessage is the message a task's turn runs: the instruction, said to
// be the task's.
func TaskMessage(t store.Task) string {
	return fmt.Sprintf("Scheduled task %q: %s", t.Title, t.Instruction)
}

// RunTask implements scheduler.Runner. A disabled or erased person's
// run, and one whose conversation is gone, is skipped; a conversation
// with a turn running is busy.
func (r *taskRunner) RunTask(ctx context.Context, run scheduler.Run) (string, error) {
	t := run.Task
	u, err := r.users.GetUser(ctx, t.OrgID, t.UserID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", &scheduler.SkipError{Reason: "the person no longer exists"}
	case err != nil:
		return "", err
	case !u.DisabledAt.IsZero():
		return "", &scheduler.SkipError{Reason: "the person is disabled"}
	}
	req := engine.Request{
		Caller: turn.Caller{UserID: u.ID, DisplayName: u.DisplayName, Department: u.Department, Organisation: t.OrgID,
			Timezone: u.Timezone, Permissions: httpapi.Permissions(u.Role)},
		OrgID: t.OrgID, ConversationID: t.ConversationID, ChannelID: t.ChannelID, Message: TaskMessage(t),
		Scheduled: &turn.Scheduled{TaskID: t.ID, Title: t.Title, Due: run.Due, Late: run.Late, Tools: t.Tools, Key: run.Key},
	}
	col, err := r.collect(ctx, req)
	if err != nil {
		return "", err
	}
	held, err := r.runs.Claim(ctx, runs.Turn{OrgID: t.OrgID, ConversationID: t.ConversationID, TurnID: col.Facts().TurnID, UserID: u.ID})
	if errors.Is(err, runs.ErrRunning) {
		return "", scheduler.ErrBusy
	}
	if err != nil {
		return "", err
	}
	defer held.End()
	// A turn may have ended between the read and the claim: read again
	// when the conversation grew.
	if last, err := r.messages.LastMessageSeq(ctx, t.OrgID, t.ConversationID); err != nil {
		return "", err
	} else if last != col.LastSeq() {
		req.TurnID = col.Facts().TurnID
		if col, err = r.collect(ctx, req); err != nil {
			return "", err
		}
	}
	tctx, cancel := context.WithCancelCause(held.Context())
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	p, err := r.eng.Prepare(tctx, col)
	if err != nil {
		return col.Facts().TurnID, err
	}
	_, err = r.eng.Run(tctx, p, held.Emit)
	return col.Facts().TurnID, err
}

// collect is the engine's Collect, a conversation gone a skip.
func (r *taskRunner) collect(ctx context.Context, req engine.Request) (*engine.Collected, error) {
	col, err := r.eng.Collect(ctx, req)
	if errors.Is(err, engine.ErrNoConversation) {
		return nil, &scheduler.SkipError{Reason: "its conversation no longer exists"}
	}
	return col, err
}
