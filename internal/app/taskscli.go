package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
)

// TasksOptions is what "quiver tasks list|show|pause|resume|cancel" run
// with.
type TasksOptions struct {
	MCPAdmin
	// ID is the task (show, pause, resume, cancel).
	ID string
	// User, for list, keeps one person's tasks.
	User string
	// JSON prints list and show as JSON.
	JSON bool
}

// taskRow is a task as list and show print it in JSON.
type taskRow struct {
	ID           string     `json:"id"`
	User         string     `json:"user"`
	Agent        string     `json:"agent"`
	Conversation string     `json:"conversation"`
	Title        string     `json:"title"`
	Instruction  string     `json:"instruction,omitempty"`
	Schedule     string     `json:"schedule"`
	State        string     `json:"state"`
	NextRunAt    *time.Time `json:"next_run_at,omitempty"`
	Runs         int64      `json:"runs"`
	LastStatus   string     `json:"last_status,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Tools        []string   `json:"tools,omitempty"`
}

func rowOf(t store.Task, full bool) taskRow {
	r := taskRow{ID: t.ID, User: t.UserID, Agent: t.Agent, Conversation: t.ConversationID, Title: t.Title,
		Schedule: scheduler.Describe(t), State: t.State, Runs: t.Runs, LastStatus: t.LastStatus, LastError: t.LastError}
	if !t.NextRunAt.IsZero() && t.State == store.TaskActive {
		next := t.NextRunAt
		r.NextRunAt = &next
	}
	if full {
		r.Instruction, r.Tools = t.Instruction, t.Tools
	}
	return r
}

func printJSON(env Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// TasksList prints the organisation's tasks (o.User's only, when set).
func TasksList(ctx context.Context, o TasksOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	list, err := rt.st.ListTasks(ctx, org, store.TaskFilter{UserID: o.User})
	if err != nil {
		return err
	}
	rows := make([]taskRow, len(list))
	for i, t := range list {
		rows[i] = rowOf(t, false)
	}
	if o.JSON {
		return printJSON(env, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no scheduled tasks")
		return nil
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tUSER\tSTATE\tNEXT RUN (UTC)\tSCHEDULE\tTITLE")
	for _, r := range rows {
		next := "-"
		if r.NextRunAt != nil {
			next = r.NextRunAt.UTC().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.User, r.State, next, r.Schedule, cut(r.Title, 50))
	}
	return w.Flush()
}

// TasksShow prints one task whole.
func TasksShow(ctx context.Context, o TasksOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	t, err := rt.st.GetTask(ctx, org, o.ID)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("tasks show: no task %q in organisation %q", o.ID, org)
	}
	if err != nil {
		return err
	}
	r := rowOf(t, true)
	if o.JSON {
		return printJSON(env, r)
	}
	next := "none"
	if r.NextRunAt != nil {
		next = when(*r.NextRunAt, t.Timezone)
	}
	fmt.Fprintf(env.Stdout, "%s %q (%s) of %s, agent %s, conversation %s\n", t.ID, t.Title, t.State, t.UserID, t.Agent, t.ConversationID)
	fmt.Fprintf(env.Stdout, "schedule: %s; next run: %s; runs: %d\n", r.Schedule, next, t.Runs)
	if t.LastStatus != "" {
		fmt.Fprintf(env.Stdout, "last run: %s at %s", t.LastStatus, when(t.LastRunAt, t.Timezone))
		if t.LastError != "" {
			fmt.Fprintf(env.Stdout, " (%s)", t.LastError)
		}
		fmt.Fprintln(env.Stdout)
	}
	fmt.Fprintf(env.Stdout, "tools: %s\ninstruction:\n%s\n", strings.Join(t.Tools, ", "), t.Instruction)
	return nil
}

// when writes t in the zone named, UTC when it does not load.
func when(t time.Time, zone string) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// TasksChange pauses, resumes or cancels the task o.ID (verb is the
// subcommand).
func TasksChange(ctx context.Context, verb string, o TasksOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	t, err := rt.st.GetTask(ctx, org, o.ID)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("tasks %s: no task %q in organisation %q", verb, o.ID, org)
	}
	if err != nil {
		return err
	}
	if verb == "cancel" {
		if err := rt.st.DeleteTask(ctx, org, t.ID); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "cancelled task %s %q\n", t.ID, t.Title)
		return nil
	}
	now := env.Now()
	state := store.TaskPaused
	u := store.TaskUpdate{UpdatedAt: now, State: &state}
	if verb == "resume" {
		state = store.TaskActive
		if !t.NextRunAt.After(now) {
			next := scheduler.Next(t, now)
			if t.Kind == store.ScheduleOnce {
				next = now
			}
			u.NextRunAt = &next
		}
	}
	got, err := rt.st.UpdateTask(ctx, org, t.ID, t.Version, u)
	if errors.Is(err, store.ErrTaskInvalid) || errors.Is(err, store.ErrTaskQuota) || errors.Is(err, store.ErrConflict) {
		return &UsageError{Msg: err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "task %s %q is %s\n", got.ID, got.Title, got.State)
	return nil
}
