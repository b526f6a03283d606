package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

var errTasksOff = apiErr(http.StatusNotImplemented, "not_configured", "scheduled tasks are not available on this server")

func (s *server) taskRoutes() {
	tags := []string{"tasks"}
	register(s, huma.Operation{
		OperationID: "list-tasks", Method: http.MethodGet, Path: "/api/tasks", Tags: tags,
		Summary: "Your scheduled tasks (an admin's all=true: the organisation's), due first",
		Errors:  []int{http.StatusForbidden, http.StatusNotImplemented},
	}, signedIn, s.listTasks)
	register(s, huma.Operation{
		OperationID: "get-task", Method: http.MethodGet, Path: "/api/tasks/{id}", Tags: tags,
		Summary: "One scheduled task: yours, or any of the organisation's for an admin",
		Errors:  []int{http.StatusNotFound, http.StatusNotImplemented},
	}, signedIn, s.getTask)
	register(s, huma.Operation{
		OperationID: "update-task", Method: http.MethodPatch, Path: "/api/tasks/{id}", Tags: tags,
		Summary: "Edit, pause or resume a scheduled task",
		Description: "Give the task's version as read; a task changed since is 409. The person who owns the task " +
			"edits its title, instruction and schedule (exactly one of at, in, every or cron, read in timezone or " +
			"their own); an admin may also pause and resume anyone's. A change a rule refuses is 422 and changes nothing.",
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusNotImplemented},
	}, signedIn, s.updateTask)
	register(s, huma.Operation{
		OperationID: "delete-task", Method: http.MethodDelete, Path: "/api/tasks/{id}", Tags: tags,
		Summary:       "Cancel (delete) a scheduled task: yours, or anyone's for an admin",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusNotImplemented},
	}, signedIn, s.deleteTask)
}

// Task is a scheduled task as the API shows it.
type Task struct {
	ID             string `json:"id"`
	UserID         string `json:"user_id"`
	Agent          string `json:"agent"`
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	Instruction    string `json:"instruction"`
	// Kind is once, cron or interval; Schedule says when in words; Spec
	// is the instant or the cron expression, EverySeconds the interval.
	Kind         string `json:"kind"`
	Schedule     string `json:"schedule"`
	Spec         string `json:"spec,omitempty"`
	EverySeconds int64  `json:"every_seconds,omitempty"`
	Timezone     string `json:"timezone"`
	// State is active, paused or done; NextRunAt is absent when the task
	// does not run (done).
	State     string     `json:"state"`
	NextRunAt *time.Time `json:"next_run_at,omitempty"`
	Version   int64      `json:"version"`
	Tools     []string   `json:"tools"`
	Runs      int64      `json:"runs"`
	// Last* describe the last run: its status (ok, failed, skipped), why
	// when not ok, its turn, and how late it started in seconds.
	LastRunAt   *time.Time `json:"last_run_at,omitempty"`
	LastStatus  string     `json:"last_status,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	LastTurnID  string     `json:"last_turn_id,omitempty"`
	LastLateSec int64      `json:"last_late_seconds,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func taskView(t store.Task) Task {
	return Task{ID: t.ID, UserID: t.UserID, Agent: t.Agent, ConversationID: t.ConversationID, Title: t.Title,
		Instruction: t.Instruction, Kind: t.Kind, Schedule: scheduler.Describe(t), Spec: t.Spec,
		EverySeconds: int64(t.Every / time.Second), Timezone: t.Timezone, State: t.State, NextRunAt: optTime(t.NextRunAt),
		Version: t.Version, Tools: t.Tools, Runs: t.Runs, LastRunAt: optTime(t.LastRunAt), LastStatus: t.LastStatus,
		LastError: t.LastError, LastTurnID: t.LastTurnID, LastLateSec: int64(t.LastLate / time.Second),
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

type listTasksInput struct {
	All bool `query:"all" doc:"An admin's: every task of the organisation, not only their own."`
}

type taskList struct {
	Body struct {
		Tasks []Task `json:"tasks"`
	}
}

func (s *server) listTasks(ctx context.Context, in *listTasksInput) (*taskList, error) {
	if s.tasks == nil {
		return nil, errTasksOff
	}
	a := authFrom(ctx)
	f := store.TaskFilter{UserID: a.UserID}
	if in.All {
		if !a.admin() {
			return nil, apiErr(http.StatusForbidden, "forbidden", "only admins list the organisation's tasks")
		}
		f.UserID = ""
	}
	list, err := s.tasks.ListTasks(ctx, a.OrgID, f)
	if err != nil {
		return nil, err
	}
	out := &taskList{}
	out.Body.Tasks = []Task{}
	for _, t := range list {
		out.Body.Tasks = append(out.Body.Tasks, taskView(t))
	}
	return out, nil
}

type taskPath struct {
	ID string `path:"id" doc:"The task's id."`
}

type taskOutput struct {
	Body Task
}

// reachable reads the task when the caller may see it: their own, or any
// of the organisation's for an admin; another's is not found.
func (s *server) reachable(ctx context.Context, id string) (store.Task, error) {
	a := authFrom(ctx)
	t, err := s.tasks.GetTask(ctx, a.OrgID, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && t.UserID != a.UserID && !a.admin() {
		return store.Task{}, notFound("no such task")
	}
	return t, err
}

func (s *server) getTask(ctx context.Context, in *taskPath) (*taskOutput, error) {
	if s.tasks == nil {
		return nil, errTasksOff
	}
	t, err := s.reachable(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &taskOutput{Body: taskView(t)}, nil
}

// TaskChange is a PATCH of a task; absent fields stay.
type TaskChange struct {
	Version     int64   `json:"version" doc:"The task's version as read."`
	Title       *string `json:"title,omitempty" maxLength:"120"`
	Instruction *string `json:"instruction,omitempty" maxLength:"4000"`
	State       *string `json:"state,omitempty" enum:"active,paused" doc:"paused or active (resume)."`
	At          string  `json:"at,omitempty" maxLength:"200" doc:"A new one-off time (YYYY-MM-DD HH:MM in timezone, or RFC 3339)."`
	In          string  `json:"in,omitempty" maxLength:"200" doc:"A new one-off delay (10m, 2h, 1d)."`
	Every       string  `json:"every,omitempty" maxLength:"200" doc:"A new plain interval (at least 5m)."`
	Cron        string  `json:"cron,omitempty" maxLength:"200" doc:"A new five-field cron expression."`
	Timezone    string  `json:"timezone,omitempty" maxLength:"64" doc:"The zone a new schedule is read in; absent: the person's."`
}

type updateTaskInput struct {
	ID   string `path:"id" doc:"The task's id."`
	Body TaskChange
}

func (s *server) updateTask(ctx context.Context, in *updateTaskInput) (*taskOutput, error) {
	if s.tasks == nil {
		return nil, errTasksOff
	}
	a := authFrom(ctx)
	t, err := s.reachable(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	b := in.Body
	now := s.now()
	u := store.TaskUpdate{UpdatedAt: now, Title: b.Title, Instruction: b.Instruction, State: b.State}
	schedule := b.At != "" || b.In != "" || b.Every != "" || b.Cron != ""
	if t.UserID != a.UserID && (b.Title != nil || b.Instruction != nil || schedule) {
		return nil, apiErr(http.StatusForbidden, "forbidden", "only the task's owner edits it; an admin may pause, resume or cancel it")
	}
	if schedule {
		zone := b.Timezone
		if zone == "" {
			zone = a.Timezone
		}
		if zone == "" {
			zone = t.Timezone
		}
		loc, err := turn.LoadZone(zone)
		if err != nil {
			return nil, apiErr(http.StatusUnprocessableEntity, "invalid_request", "unknown time zone "+zone)
		}
		plan, first, err := scheduler.Plan(scheduler.When{At: b.At, In: b.In, Every: b.Every, Cron: b.Cron}, loc, now)
		if err != nil {
			return nil, apiErr(http.StatusUnprocessableEntity, "invalid_request", err.Error())
		}
		u.Schedule, u.NextRunAt = &plan, &first
	}
	if b.State != nil && *b.State == store.TaskActive && !schedule && !t.NextRunAt.After(now) {
		next := scheduler.Next(t, now)
		if t.Kind == store.ScheduleOnce {
			next = now
		}
		u.NextRunAt = &next
	}
	got, err := s.tasks.UpdateTask(ctx, a.OrgID, t.ID, b.Version, u)
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil, apiErr(http.StatusConflict, "conflict", "the task changed since it was read; read it again")
	case errors.Is(err, store.ErrTaskInvalid), errors.Is(err, store.ErrTaskQuota):
		return nil, apiErr(http.StatusUnprocessableEntity, "invalid_request", taskRefusal(err))
	case err != nil:
		return nil, err
	}
	s.wake()
	return &taskOutput{Body: taskView(got)}, nil
}

// taskRefusal is a store refusal from its sentinel's text on.
func taskRefusal(err error) string {
	m := err.Error()
	for _, e := range []error{store.ErrTaskInvalid, store.ErrTaskQuota} {
		if i := strings.Index(m, e.Error()); i >= 0 {
			return m[i:]
		}
	}
	return m
}

func (s *server) deleteTask(ctx context.Context, in *taskPath) (*struct{}, error) {
	if s.tasks == nil {
		return nil, errTasksOff
	}
	t, err := s.reachable(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := s.tasks.DeleteTask(ctx, authFrom(ctx).OrgID, t.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no such task")
		}
		return nil, err
	}
	return nil, nil
}
