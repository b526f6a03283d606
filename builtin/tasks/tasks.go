// Package tasks provides the scheduled-task tools: schedule_task, which
// makes a reminder or a recurring task the agent runs later as a new
// turn (see package scheduler), and update_scheduled_task, which lists,
// edits, pauses, resumes and cancels the person's tasks. The person,
// organisation, agent and conversation always come from the turn's
// scope; a task keeps the tools the scheduling turn could use.
package tasks

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Names of the tools (the template macros task_tool and
// task_update_tool name them).
const (
	ScheduleName = "schedule_task"
	UpdateName   = "update_scheduled_task"
)

// Family is the tools' family: an allowlist entry "tasks" admits both.
const Family = "tasks"

// MaxListed bounds the tasks one list answers with: a person's cap of
// live tasks and their ten latest finished ones.
const MaxListed = store.MaxTasksPerUser + 10

var (
	//go:embed schedule_task.md
	scheduleDescription string
	//go:embed update_scheduled_task.md
	updateDescription string
)

// Conversations reads a conversation, to check a named one is the
// person's.
type Conversations interface {
	GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error)
}

// Config is what the tools need. A nil Tasks keeps the declarations;
// their calls fail with an infrastructure error wrapping
// store.ErrNoStore.
type Config struct {
	Tasks store.Tasks
	// Conversations checks a conversation a task is to run in besides
	// the turn's own; nil refuses any other.
	Conversations Conversations
	// Now is the clock; nil is clock.Now. IDs names new tasks; nil is
	// random.
	Now func() time.Time
	IDs ids.Source
	// Wake tells this replica's scheduler a task changed; nil does
	// nothing (the scheduler's poll finds it).
	Wake func()
}

// Tools returns schedule_task and update_scheduled_task.
func Tools(c Config) []*tool.Tool {
	if c.Now == nil {
		c.Now = clock.Now
	}
	c.IDs = ids.OrRandom(c.IDs)
	if c.Wake == nil {
		c.Wake = func() {}
	}
	t := &tools{c}
	return []*tool.Tool{t.schedule(), t.update()}
}

type tools struct{ cfg Config }

// WhenInput is a schedule as the model gives it.
type WhenInput struct {
	At       string `json:"at,omitempty" jsonschema:"a one-off time: YYYY-MM-DD HH:MM in the person's zone, or RFC 3339"`
	In       string `json:"in,omitempty" jsonschema:"a one-off delay from now, such as 10m, 2h or 1d"`
	Every    string `json:"every,omitempty" jsonschema:"a plain interval, such as 3h or 1d (at least 5m)"`
	Cron     string `json:"cron,omitempty" jsonschema:"a five-field cron expression (minute hour day-of-month month day-of-week) on the person's wall clock"`
	Timezone string `json:"timezone,omitempty" jsonschema:"an IANA time zone, such as Europe/Paris; leave out for the person's own"`
}

// ScheduleInput is schedule_task's arguments.
type ScheduleInput struct {
	Instruction string `json:"instruction" jsonschema:"what to do when the task runs, as a request to yourself that stands on its own"`
	Title       string `json:"title,omitempty" jsonschema:"a short label for the person's list of tasks"`
	WhenInput
	Conversation string `json:"conversation,omitempty" jsonschema:"the id of another of the person's conversations to run in; leave out for this one"`
}

// UpdateInput is update_scheduled_task's arguments.
type UpdateInput struct {
	Action      string `json:"action" jsonschema:"list, edit, pause, resume or cancel"`
	TaskID      string `json:"task_id,omitempty" jsonschema:"the task, as list gives it (not for list)"`
	Instruction string `json:"instruction,omitempty" jsonschema:"edit: the new instruction"`
	Title       string `json:"title,omitempty" jsonschema:"edit: the new title"`
	WhenInput
}

// tuneWhen bounds the schedule fields.
func tuneWhen(sc *jsonschema.Schema) {
	n, z := store.MaxTaskSpecBytes, 64
	for _, f := range []string{"at", "in", "every", "cron"} {
		sc.Properties[f].MaxLength = &n
	}
	sc.Properties["timezone"].MaxLength = &z
}

func (t *tools) schedule() *tool.Tool {
	return tool.New(tool.Spec{
		Name:        ScheduleName,
		Family:      Family,
		Macros:      []string{"task_tool"},
		Description: strings.TrimSpace(scheduleDescription),
		Access:      tool.Write,
		Limits: []tool.Limit{{Name: "tasks_per_person", Value: store.MaxTasksPerUser},
			{Name: "tasks_per_community", Value: store.MaxTasksPerOrg},
			{Name: "instruction_characters", Value: store.MaxTaskInstructionRunes},
			{Name: "min_interval_minutes", Value: int(scheduler.MinInterval / time.Minute)}},
		Tune: func(sc *jsonschema.Schema) {
			tuneWhen(sc)
			i, ti, c := store.MaxTaskInstructionRunes, store.MaxTaskTitleRunes, store.MaxTaskKeyBytes
			sc.Properties["instruction"].MaxLength = &i
			sc.Properties["title"].MaxLength = &ti
			sc.Properties["conversation"].MaxLength = &c
		},
	}, func(ctx context.Context, sc tool.Scope, in ScheduleInput) (string, error) {
		return t.create(ctx, sc, in)
	})
}

func (t *tools) update() *tool.Tool {
	return tool.New(tool.Spec{
		Name:        UpdateName,
		Family:      Family,
		Macros:      []string{"task_update_tool"},
		Description: strings.TrimSpace(updateDescription),
		Access:      tool.Write,
		Limits:      []tool.Limit{{Name: "tasks_listed", Value: MaxListed}},
		Tune: func(sc *jsonschema.Schema) {
			tuneWhen(sc)
			sc.Properties["action"].Enum = []any{"list", "edit", "pause", "resume", "cancel"}
			i, ti, id := store.MaxTaskInstructionRunes, store.MaxTaskTitleRunes, store.MaxTaskKeyBytes
			sc.Properties["instruction"].MaxLength = &i
			sc.Properties["title"].MaxLength = &ti
			sc.Properties["task_id"].MaxLength = &id
		},
	}, func(ctx context.Context, sc tool.Scope, in UpdateInput) (string, error) {
		return t.change(ctx, sc, in)
	})
}

// errNoStore is the tools' answer without a store.
func errNoStore(name string) error { return tool.Infra(fmt.Errorf("%s: %w", name, store.ErrNoStore)) }

// zoneOf is the zone a schedule is read in: the one given, else the
// caller's, else UTC.
func zoneOf(sc tool.Scope, given string) (*time.Location, error) {
	name := strings.TrimSpace(given)
	if name == "" {
		name = sc.Timezone
	}
	if name == "" {
		return time.UTC, nil
	}
	loc, err := turn.LoadZone(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: give an IANA name such as Europe/Paris", name)
	}
	return loc, nil
}

// Plan reads the schedule of in at now, in the zone it names or the
// scope's.
func Plan(sc tool.Scope, in WhenInput, now time.Time) (store.TaskSchedule, time.Time, error) {
	loc, err := zoneOf(sc, in.Timezone)
	if err != nil {
		return store.TaskSchedule{}, time.Time{}, err
	}
	return scheduler.Plan(scheduler.When{At: in.At, In: in.In, Every: in.Every, Cron: in.Cron}, loc, now)
}

// available is the names of the tools the running turn may use (its
// selection, declared or not); none outside a turn.
func available(ctx context.Context) []string {
	cat, ok := tool.CatalogFrom(ctx)
	if !ok {
		return []string{}
	}
	var out []string
	for _, t := range cat.Available() {
		out = append(out, t.Name())
	}
	return out
}

func (t *tools) create(ctx context.Context, sc tool.Scope, in ScheduleInput) (string, error) {
	switch {
	case t.cfg.Tasks == nil:
		return "", errNoStore(ScheduleName)
	case sc.ScheduledTask != "":
		return "", errors.New("a scheduled task's turn cannot schedule further tasks")
	case sc.ConversationID == "" || sc.Agent == "":
		return "", errors.New("this turn has no conversation of an agent for the task to run in")
	}
	conv := sc.ConversationID
	if in.Conversation != "" && in.Conversation != conv {
		if err := t.own(ctx, sc, in.Conversation); err != nil {
			return "", err
		}
		conv = in.Conversation
	}
	now := t.cfg.Now()
	plan, first, err := Plan(sc, in.WhenInput, now)
	if err != nil {
		return "", err
	}
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = titleOf(in.Instruction)
	}
	task := store.Task{OrgID: sc.OrgID, ID: t.cfg.IDs.New("task_"), UserID: sc.UserID, Agent: sc.Agent,
		ConversationID: conv, ChannelID: sc.ChannelID, Title: title, Instruction: in.Instruction,
		Kind: plan.Kind, Spec: plan.Spec, Every: plan.Every, Timezone: plan.Timezone, Tools: available(ctx),
		State: store.TaskActive, NextRunAt: first, CreatedTurnID: sc.TurnID, CreatedAt: now, UpdatedAt: now}
	if conv != sc.ConversationID {
		task.ChannelID = ""
	}
	got, err := t.cfg.Tasks.CreateTask(ctx, task)
	switch {
	case errors.Is(err, store.ErrTaskInvalid), errors.Is(err, store.ErrTaskQuota):
		return "", errors.New(cleanErr(err))
	case err != nil:
		return "", tool.Infra(fmt.Errorf("%s: %w", ScheduleName, err))
	}
	t.cfg.Wake()
	return fmt.Sprintf("Scheduled %s %q: %s; first run %s.", got.ID, got.Title, scheduler.Describe(got), when(got.NextRunAt, got.Timezone)), nil
}

// own refuses a conversation that is not the person's, saying nothing of
// whether it exists.
func (t *tools) own(ctx context.Context, sc tool.Scope, id string) error {
	refuse := fmt.Errorf("no conversation %q of yours to run the task in", id)
	if t.cfg.Conversations == nil {
		return refuse
	}
	c, err := t.cfg.Conversations.GetConversation(ctx, sc.OrgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return refuse
	case err != nil:
		return tool.Infra(fmt.Errorf("%s: %w", ScheduleName, err))
	case c.UserID != sc.UserID:
		return refuse
	case c.Agent != sc.Agent:
		return fmt.Errorf("conversation %q is with another agent; a task runs in a conversation of the agent that scheduled it", id)
	}
	return nil
}

// titleOf is a title from an instruction: its first line, cut at 60
// characters on a word.
func titleOf(instruction string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(instruction), "\n")
	r := []rune(strings.TrimSpace(line))
	if len(r) <= 60 {
		return string(r)
	}
	cut := string(r[:60])
	if i := strings.LastIndexByte(cut, ' '); i > 30 {
		cut = cut[:i]
	}
	return cut + "…"
}

// when writes an instant in a zone for the model.
func when(t time.Time, zone string) string {
	if t.IsZero() {
		return "none"
	}
	loc, err := turn.LoadZone(zone)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Monday 2006-01-02 15:04 MST")
}

// mine reads the person's task, refusing another's as an unknown one.
func (t *tools) mine(ctx context.Context, sc tool.Scope, id string) (store.Task, error) {
	refuse := fmt.Errorf("no task %q of yours; list them to see their ids", id)
	if strings.TrimSpace(id) == "" {
		return store.Task{}, errors.New("give task_id (list the tasks to see their ids)")
	}
	tk, err := t.cfg.Tasks.GetTask(ctx, sc.OrgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Task{}, refuse
	case err != nil:
		return store.Task{}, tool.Infra(fmt.Errorf("%s: %w", UpdateName, err))
	case tk.UserID != sc.UserID:
		return store.Task{}, refuse
	}
	return tk, nil
}

func (t *tools) change(ctx context.Context, sc tool.Scope, in UpdateInput) (string, error) {
	if t.cfg.Tasks == nil {
		return "", errNoStore(UpdateName)
	}
	if in.Action == "list" {
		return t.list(ctx, sc)
	}
	if sc.ScheduledTask != "" && (in.Action == "edit" || in.Action == "resume") {
		// Giving a task a new time or running it again would be
		// scheduling under another name.
		return "", fmt.Errorf("a scheduled task's turn cannot %s tasks; it may list, pause or cancel them", in.Action)
	}
	tk, err := t.mine(ctx, sc, in.TaskID)
	if err != nil {
		return "", err
	}
	now := t.cfg.Now()
	u := store.TaskUpdate{UpdatedAt: now}
	switch in.Action {
	case "cancel":
		if err := t.cfg.Tasks.DeleteTask(ctx, sc.OrgID, tk.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", tool.Infra(fmt.Errorf("%s: %w", UpdateName, err))
		}
		return fmt.Sprintf("Cancelled %s %q.", tk.ID, tk.Title), nil
	case "pause":
		s := store.TaskPaused
		u.State = &s
	case "resume":
		s := store.TaskActive
		u.State = &s
		if next := resumeAt(tk, now); !next.Equal(tk.NextRunAt) {
			u.NextRunAt = &next
		}
	case "edit":
		if err := edit(sc, in, now, &u); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unknown action %q: list, edit, pause, resume or cancel", in.Action)
	}
	got, err := t.cfg.Tasks.UpdateTask(ctx, sc.OrgID, tk.ID, tk.Version, u)
	switch {
	case errors.Is(err, store.ErrTaskInvalid), errors.Is(err, store.ErrTaskQuota), errors.Is(err, store.ErrConflict):
		return "", errors.New(cleanErr(err))
	case err != nil:
		return "", tool.Infra(fmt.Errorf("%s: %w", UpdateName, err))
	}
	t.cfg.Wake()
	return fmt.Sprintf("%s %q is %s: %s; next run %s.", got.ID, got.Title, got.State, scheduler.Describe(got), when(nextShown(got), got.Timezone)), nil
}

// edit fills u from an edit's fields, refusing an edit that changes
// nothing.
func edit(sc tool.Scope, in UpdateInput, now time.Time, u *store.TaskUpdate) error {
	if s := strings.TrimSpace(in.Instruction); s != "" {
		u.Instruction = &s
	}
	if s := strings.TrimSpace(in.Title); s != "" {
		u.Title = &s
	}
	if in.At != "" || in.In != "" || in.Every != "" || in.Cron != "" {
		plan, first, err := Plan(sc, in.WhenInput, now)
		if err != nil {
			return err
		}
		u.Schedule, u.NextRunAt = &plan, &first
	}
	if u.Instruction == nil && u.Title == nil && u.Schedule == nil {
		return errors.New("an edit needs what changes: instruction, title, or a new schedule (at, in, every or cron)")
	}
	return nil
}

// resumeAt is when a resumed task is next due: the time it kept, or,
// when that passed while it was paused, its next time after now (a
// one-off task whose time passed runs now).
func resumeAt(tk store.Task, now time.Time) time.Time {
	if tk.NextRunAt.After(now) {
		return tk.NextRunAt
	}
	if tk.Kind == store.ScheduleOnce {
		return now
	}
	return scheduler.Next(tk, now)
}

// nextShown is a task's next run as lists show it: none while paused.
func nextShown(tk store.Task) time.Time {
	if tk.State != store.TaskActive {
		return time.Time{}
	}
	return tk.NextRunAt
}

// cleanErr is a store refusal from its sentinel's text on, without the
// backend's prefix: what the model reads.
func cleanErr(err error) string {
	s := err.Error()
	for _, e := range []error{store.ErrTaskInvalid, store.ErrTaskQuota, store.ErrConflict} {
		if i := strings.Index(s, e.Error()); i >= 0 {
			return s[i:]
		}
	}
	return s
}

func (t *tools) list(ctx context.Context, sc tool.Scope) (string, error) {
	all, err := t.cfg.Tasks.ListTasks(ctx, sc.OrgID, store.TaskFilter{UserID: sc.UserID})
	if err != nil {
		return "", tool.Infra(fmt.Errorf("%s: %w", UpdateName, err))
	}
	if len(all) == 0 {
		return "You have no scheduled tasks.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d scheduled tasks:\n", len(all))
	for i, tk := range all {
		if i == MaxListed {
			fmt.Fprintf(&b, "… and %d finished ones not listed.\n", len(all)-MaxListed)
			break
		}
		fmt.Fprintf(&b, "- %s %q (%s): %s; next %s", tk.ID, tk.Title, tk.State, scheduler.Describe(tk), when(nextShown(tk), tk.Timezone))
		if tk.LastStatus != "" {
			fmt.Fprintf(&b, "; last run %s", tk.LastStatus)
		}
		b.WriteString("\n")
	}
	return strings.TrimSpace(b.String()), nil
}
