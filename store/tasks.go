package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the scheduled tasks repository, each refused before anything
// is written.
const (
	// MaxTasksPerUser is how many active or paused tasks one person
	// holds in an organisation.
	MaxTasksPerUser = 25
	// MaxTasksPerOrg is how many active or paused tasks an organisation
	// (a community) holds.
	MaxTasksPerOrg = 1000
	// MaxDoneTasksPerUser is how many finished one-off tasks a person's
	// list keeps: creating a task deletes their oldest finished ones past
	// it, in the same transaction.
	MaxDoneTasksPerUser = 50
	// MaxTaskInstructionRunes bounds the instruction a task runs.
	MaxTaskInstructionRunes = 4000
	// MaxTaskTitleRunes bounds a task's title.
	MaxTaskTitleRunes = 120
	// MaxTaskSpecBytes bounds a schedule's spec (a cron expression or an
	// instant).
	MaxTaskSpecBytes = 200
	// MaxTaskTools bounds the tools a task keeps from the turn that
	// scheduled it.
	MaxTaskTools = 300
	// MaxTaskErrorRunes bounds the last run's error kept on the task.
	MaxTaskErrorRunes = 500
	// MaxTaskKeyBytes bounds ids, agent names and channel ids.
	MaxTaskKeyBytes = 255
	// MaxTaskList bounds one list: every live task of an organisation
	// (MaxTasksPerOrg) with room for finished ones; past it, the latest
	// finished ones are left out.
	MaxTaskList = 2000
)

// Task states.
const (
	// TaskActive is a task the scheduler runs when it is due.
	TaskActive = "active"
	// TaskPaused is a task kept but not run until resumed.
	TaskPaused = "paused"
	// TaskDone is a one-off task that ran (or was skipped for good).
	TaskDone = "done"
)

// Schedule kinds.
const (
	// ScheduleOnce runs once, at Spec (an RFC 3339 instant).
	ScheduleOnce = "once"
	// ScheduleCron runs at the times of a cron expression (Spec) in the
	// task's time zone.
	ScheduleCron = "cron"
	// ScheduleInterval runs every Every, from the first run at
	// NextRunAt.
	ScheduleInterval = "interval"
)

// Outcomes of a task's last run.
const (
	// TaskRunOK is a run whose turn ended.
	TaskRunOK = "ok"
	// TaskRunFailed is a run whose turn failed (LastError says why) or
	// that failed MaxTaskAttempts times.
	TaskRunFailed = "failed"
	// TaskRunSkipped is a due run the scheduler did not start: its
	// person is disabled, or its conversation is gone (LastError says
	// which).
	TaskRunSkipped = "skipped"
)

// MaxTaskAttempts is how many times one due run is claimed (a replica
// that claimed it died, or the turn failed on infrastructure) before the
// scheduler records it failed and moves to the next.
const MaxTaskAttempts = 3

// Errors of the tasks repository, returned wrapped; test with errors.Is.
var (
	// ErrTaskInvalid reports a task that breaks a rule of the
	// repository; nothing is written.
	ErrTaskInvalid = errors.New("invalid scheduled task")
	// ErrTaskQuota reports a person or organisation holding their most
	// tasks already; nothing is written.
	ErrTaskQuota = errors.New("scheduled task limit reached")
	// ErrLeaseLost reports a renew, retry or finish by a claimer whose
	// lease on the task passed and was taken by another (or whose task
	// was deleted); nothing is written.
	ErrLeaseLost = errors.New("the task's lease is no longer held")
)

// Task is a person's scheduled task: an instruction their agent runs as
// a new turn when it is due, in the conversation it names.
type Task struct {
	OrgID string
	ID    string
	// UserID is the person the task's turns run as.
	UserID string
	// Agent is the agent whose turns run the task.
	Agent string
	// ConversationID is the conversation the turns run in; ChannelID the
	// surface's channel when it has one ("" on the web chat).
	ConversationID string
	ChannelID      string
	// Title is a short label for lists; Instruction what the turn is
	// asked to do.
	Title       string
	Instruction string
	// Kind is ScheduleOnce, ScheduleCron or ScheduleInterval. Spec is the
	// instant (once, RFC 3339) or the cron expression; Every the interval
	// (whole seconds). Timezone is the IANA zone the schedule reads its
	// wall clock in (the requester's).
	Kind     string
	Spec     string
	Every    time.Duration
	Timezone string
	// Tools are the tools the scheduling turn could use: a run declares
	// only those its own selection still allows.
	Tools []string
	// State is TaskActive, TaskPaused or TaskDone.
	State string
	// NextRunAt is when the task is next due; zero when it is not
	// (done). A paused task keeps the one it had.
	NextRunAt time.Time
	// Version grows with every change a person makes (UpdateTask), so an
	// run that finishes after an edit does not write over it.
	Version int64
	// LeaseOwner and LeaseUntil say which scheduler holds the task's due
	// run and until when; Attempts how many claims the due run has had.
	LeaseOwner string
	LeaseUntil time.Time
	Attempts   int
	// Runs counts the runs started; LastDueAt, LastRunAt, LastStatus,
	// LastError and LastTurnID describe the last one (LastLate its
	// lateness when it started more than a minute after it was due).
	Runs       int64
	LastDueAt  time.Time
	LastRunAt  time.Time
	LastStatus string
	LastError  string
	LastTurnID string
	LastLate   time.Duration
	// CreatedTurnID is the turn that scheduled the task ("" from the API).
	CreatedTurnID string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TaskFilter selects a list of tasks of one organisation.
type TaskFilter struct {
	// UserID keeps one person's tasks; "" keeps everyone's (admins).
	UserID string
	// ConversationID keeps the tasks of one conversation; "" any.
	ConversationID string
}

// TaskUpdate is a person's change of a task; nil fields stay.
type TaskUpdate struct {
	Title          *string
	Instruction    *string
	ConversationID *string
	ChannelID      *string
	// Kind, Spec, Every and Timezone change together: a new schedule
	// (Schedule non-nil) replaces all four and NextRunAt.
	Schedule *TaskSchedule
	// State pauses (TaskPaused) or resumes (TaskActive) the task. A
	// resumed task whose NextRunAt passed while paused needs a new one
	// (NextRunAt).
	State *string
	// NextRunAt sets when the task is next due.
	NextRunAt *time.Time
	// UpdatedAt stamps the change.
	UpdatedAt time.Time
}

// TaskSchedule is a task's schedule as a unit (Task's fields of the same
// names).
type TaskSchedule struct {
	Kind     string
	Spec     string
	Every    time.Duration
	Timezone string
}

// TaskClaim asks for due tasks.
type TaskClaim struct {
	// Now is the scheduler's clock: a task is due when NextRunAt is not
	// after it and no unexpired lease holds it. The database's clock is
	// never read.
	Now time.Time
	// Owner names the claiming scheduler (a replica).
	Owner string
	// Lease is how long the claim holds before another may take it.
	Lease time.Duration
	// Limit bounds how many tasks one claim takes (1 to 1000).
	Limit int
}

// TaskFinish records the end of a claimed run.
type TaskFinish struct {
	// DueAt is the due time the run was for (the task's NextRunAt as
	// claimed); RanAt when it started.
	DueAt, RanAt time.Time
	// Next is when the task is next due; zero makes it TaskDone.
	Next time.Time
	// Status is TaskRunOK, TaskRunFailed or TaskRunSkipped; Error why
	// when not ok; TurnID the run's turn.
	Status string
	Error  string
	TurnID string
	// Late is how late the run started (zero when on time).
	Late time.Duration
	// Started counts the run in Task.Runs (false for a skipped one).
	Started bool
}

// Tasks is the scheduled tasks repository: what people scheduled, and
// the leases several schedulers claim due runs with, each due run by
// exactly one at a time.
type Tasks interface {
	// CreateTask validates t (CheckTask) and stores it, refusing with
	// ErrTaskQuota when its person holds MaxTasksPerUser active or
	// paused tasks, or its organisation MaxTasksPerOrg (checked and
	// written in one transaction, so concurrent creates never pass a
	// bound); the person's finished tasks past MaxDoneTasksPerUser go.
	// An id taken gives ErrExists.
	CreateTask(ctx context.Context, t Task) (Task, error)
	// GetTask reads one task; ErrNotFound when orgID has none of that id.
	GetTask(ctx context.Context, orgID, id string) (Task, error)
	// ListTasks lists the organisation's tasks that f keeps, by
	// NextRunAt (due first, done last), then id: at most MaxTaskList.
	ListTasks(ctx context.Context, orgID string, f TaskFilter) ([]Task, error)
	// UpdateTask applies u to the task when its Version is version
	// (ErrConflict otherwise), validating the result first, and grows
	// Version. A lease held stays: the run under it finishes without
	// writing over the change.
	UpdateTask(ctx context.Context, orgID, id string, version int64, u TaskUpdate) (Task, error)
	// DeleteTask deletes the task (cancelling it); ErrNotFound when there
	// is none. A run under way finishes; its finish then writes nothing.
	DeleteTask(ctx context.Context, orgID, id string) error
	// ClaimDueTasks leases to c.Owner, until c.Now+c.Lease, at most
	// c.Limit active tasks due at c.Now (earliest first) that no
	// unexpired lease holds, counting an attempt on each, and returns
	// them. Concurrent claims, from any replica, never return one due
	// run to two claimers while a lease holds.
	ClaimDueTasks(ctx context.Context, c TaskClaim) ([]Task, error)
	// RenewTaskLease extends owner's lease on the task to until;
	// ErrLeaseLost when owner no longer holds it.
	RenewTaskLease(ctx context.Context, orgID, id, owner string, until time.Time) error
	// RetryTask hands the claimed run back to be claimed again at at
	// (its conversation was busy), without counting the attempt;
	// ErrLeaseLost when owner no longer holds it.
	RetryTask(ctx context.Context, orgID, id, owner string, at time.Time) error
	// FinishTaskRun records the end of owner's run, releases the lease
	// and resets the attempts. When the task is still due at f.DueAt (no
	// one gave it a new schedule or time since the claim) NextRunAt
	// becomes f.Next, or the task TaskDone when f.Next is zero (a paused
	// one-off that ran included); a schedule a person changed meanwhile
	// stays as they set it, while other edits (a title, an instruction, a
	// pause) never make the run due again. ErrLeaseLost when owner no
	// longer holds it.
	FinishTaskRun(ctx context.Context, orgID, id, owner string, f TaskFinish) error
	// NextTaskDue returns the earliest NextRunAt of an active task (a
	// leased one's lease end when later), false when no task is
	// active: how long a scheduler may sleep.
	NextTaskDue(ctx context.Context) (time.Time, bool, error)
}

// CheckTask returns t cleaned (title and instruction through PlainText,
// tools sorted and deduplicated, times in UTC) or an ErrTaskInvalid
// naming the first rule it breaks: keys present and at most
// MaxTaskKeyBytes, a known kind with a spec or interval that fits it, a
// known state, an instruction of 1 to MaxTaskInstructionRunes, a title
// of at most MaxTaskTitleRunes, at most MaxTaskTools tools, and an
// active task with a NextRunAt. The cron expression's grammar and the
// zone's existence are the scheduler's to check; the store checks
// shape.
func CheckTask(t Task) (Task, error) {
	bad := func(format string, args ...any) (Task, error) {
		return Task{}, fmt.Errorf("%w: %s", ErrTaskInvalid, fmt.Sprintf(format, args...))
	}
	for _, k := range []struct{ name, v string }{{"organisation", t.OrgID}, {"id", t.ID}, {"user", t.UserID},
		{"agent", t.Agent}, {"conversation", t.ConversationID}} {
		if k.v == "" || len(k.v) > MaxTaskKeyBytes || !ValidBlobKey(k.v) {
			return bad("a task needs its %s (1 to %d bytes of text)", k.name, MaxTaskKeyBytes)
		}
	}
	if len(t.ChannelID) > MaxTaskKeyBytes || (t.ChannelID != "" && !ValidBlobKey(t.ChannelID)) {
		return bad("the channel id is not valid")
	}
	t.Title = strings.TrimSpace(PlainText(t.Title))
	t.Instruction = strings.TrimSpace(PlainText(t.Instruction))
	switch n := utf8.RuneCountInString(t.Instruction); {
	case n == 0:
		return bad("the instruction is empty: say what the task should do")
	case n > MaxTaskInstructionRunes:
		return bad("the instruction is %d characters; the limit is %d", n, MaxTaskInstructionRunes)
	}
	if n := utf8.RuneCountInString(t.Title); n > MaxTaskTitleRunes {
		return bad("the title is %d characters; the limit is %d", n, MaxTaskTitleRunes)
	}
	s, err := CheckTaskSchedule(TaskSchedule{Kind: t.Kind, Spec: t.Spec, Every: t.Every, Timezone: t.Timezone})
	if err != nil {
		return Task{}, err
	}
	t.Kind, t.Spec, t.Every, t.Timezone = s.Kind, s.Spec, s.Every, s.Timezone
	switch t.State {
	case TaskActive, TaskPaused, TaskDone:
	default:
		return bad("unknown state %q (active, paused or done)", t.State)
	}
	if t.State == TaskActive && t.NextRunAt.IsZero() {
		return bad("an active task needs the time it is next due")
	}
	if len(t.Tools) > MaxTaskTools {
		return bad("%d tools; a task keeps at most %d", len(t.Tools), MaxTaskTools)
	}
	tools := slices.Clone(t.Tools)
	slices.Sort(tools)
	t.Tools = slices.Compact(tools)
	for _, name := range t.Tools {
		if name == "" || len(name) > 128 || !ValidBlobKey(name) {
			return bad("a tool name is not valid")
		}
	}
	if t.Tools == nil {
		t.Tools = []string{}
	}
	if utf8.RuneCountInString(t.LastError) > MaxTaskErrorRunes {
		t.LastError = string([]rune(t.LastError)[:MaxTaskErrorRunes])
	}
	t.LastError = PlainText(t.LastError)
	t.NextRunAt, t.LeaseUntil = t.NextRunAt.UTC(), t.LeaseUntil.UTC()
	t.LastDueAt, t.LastRunAt = t.LastDueAt.UTC(), t.LastRunAt.UTC()
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, nil
}

// CheckTaskSchedule checks a schedule's shape: a once with an RFC 3339
// instant, a cron with an expression of at most MaxTaskSpecBytes, an
// interval of at least a minute and at most a year with no spec; a zone
// name of at most 64 bytes ("" is UTC).
func CheckTaskSchedule(s TaskSchedule) (TaskSchedule, error) {
	bad := func(format string, args ...any) (TaskSchedule, error) {
		return TaskSchedule{}, fmt.Errorf("%w: %s", ErrTaskInvalid, fmt.Sprintf(format, args...))
	}
	s.Spec = strings.TrimSpace(s.Spec)
	if len(s.Spec) > MaxTaskSpecBytes || !ValidBlobKey(s.Spec) {
		return bad("the schedule is longer than %d bytes", MaxTaskSpecBytes)
	}
	if len(s.Timezone) > 64 || !ValidBlobKey(s.Timezone) {
		return bad("the time zone name is not valid")
	}
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	switch s.Kind {
	case ScheduleOnce:
		if _, err := time.Parse(time.RFC3339Nano, s.Spec); err != nil {
			return bad("a one-off task needs its time as RFC 3339, not %q", s.Spec)
		}
		s.Every = 0
	case ScheduleCron:
		if s.Spec == "" {
			return bad("a cron task needs its expression")
		}
		s.Every = 0
	case ScheduleInterval:
		if s.Every < time.Minute || s.Every > 366*24*time.Hour || s.Every%time.Second != 0 {
			return bad("an interval is whole seconds from one minute to a year, not %v", s.Every)
		}
		s.Spec = ""
	default:
		return bad("unknown schedule kind %q (once, cron or interval)", s.Kind)
	}
	return s, nil
}

// CheckTaskClaim checks a claim's fields.
func CheckTaskClaim(c TaskClaim) error {
	switch {
	case c.Owner == "" || len(c.Owner) > MaxTaskKeyBytes || !ValidBlobKey(c.Owner):
		return fmt.Errorf("%w: a claim needs its owner", ErrTaskInvalid)
	case c.Lease <= 0:
		return fmt.Errorf("%w: a claim needs a positive lease", ErrTaskInvalid)
	case c.Limit < 1 || c.Limit > 1000:
		return fmt.Errorf("%w: a claim takes 1 to 1000 tasks, not %d", ErrTaskInvalid, c.Limit)
	case c.Now.IsZero():
		return fmt.Errorf("%w: a claim needs the scheduler's time", ErrTaskInvalid)
	}
	return nil
}

// CheckTaskFinish checks a finish's fields and returns it cleaned (the
// error cut to MaxTaskErrorRunes and made plain text).
func CheckTaskFinish(f TaskFinish) (TaskFinish, error) {
	switch f.Status {
	case TaskRunOK, TaskRunFailed, TaskRunSkipped:
	default:
		return TaskFinish{}, fmt.Errorf("%w: unknown run status %q", ErrTaskInvalid, f.Status)
	}
	if utf8.RuneCountInString(f.Error) > MaxTaskErrorRunes {
		f.Error = string([]rune(f.Error)[:MaxTaskErrorRunes])
	}
	f.Error = PlainText(f.Error)
	if len(f.TurnID) > MaxTaskKeyBytes || !ValidBlobKey(f.TurnID) {
		return TaskFinish{}, fmt.Errorf("%w: the turn id is not valid", ErrTaskInvalid)
	}
	f.DueAt, f.RanAt, f.Next = f.DueAt.UTC(), f.RanAt.UTC(), f.Next.UTC()
	return f, nil
}

// CheckTaskCounts refuses a new task when its person holds perUser tasks
// (active or paused) or its organisation perOrg.
func CheckTaskCounts(perUser, perOrg int64) error {
	switch {
	case perUser >= MaxTasksPerUser:
		return fmt.Errorf("%w: you have %d scheduled tasks, the most one person may have; cancel one first", ErrTaskQuota, perUser)
	case perOrg >= MaxTasksPerOrg:
		return fmt.Errorf("%w: the organisation has %d scheduled tasks, the most it may have", ErrTaskQuota, perOrg)
	}
	return nil
}

// ApplyTaskUpdate returns t with u applied and checked (CheckTask), its
// Version grown: the one rule both backends write by.
func ApplyTaskUpdate(t Task, u TaskUpdate) (Task, error) {
	if u.Title != nil {
		t.Title = *u.Title
	}
	if u.Instruction != nil {
		t.Instruction = *u.Instruction
	}
	if u.ConversationID != nil {
		t.ConversationID = *u.ConversationID
	}
	if u.ChannelID != nil {
		t.ChannelID = *u.ChannelID
	}
	if u.Schedule != nil {
		t.Kind, t.Spec, t.Every, t.Timezone = u.Schedule.Kind, u.Schedule.Spec, u.Schedule.Every, u.Schedule.Timezone
	}
	if u.State != nil {
		if *u.State == TaskDone {
			return Task{}, fmt.Errorf("%w: a task is paused or resumed, never marked done by hand", ErrTaskInvalid)
		}
		if t.State == TaskDone && u.Schedule == nil {
			return Task{}, fmt.Errorf("%w: the task is done; give it a new time to run it again", ErrTaskInvalid)
		}
		t.State = *u.State
	} else if t.State == TaskDone && u.Schedule != nil {
		t.State = TaskActive
	}
	if u.NextRunAt != nil {
		t.NextRunAt = *u.NextRunAt
	}
	if !u.UpdatedAt.IsZero() {
		t.UpdatedAt = u.UpdatedAt
	}
	t.Version++
	return CheckTask(t)
}

// TaskDue reports whether the claimable task t is due at now for a
// claim: active, due, and no lease holding it.
func TaskDue(t Task, now time.Time) bool {
	return t.State == TaskActive && !t.NextRunAt.IsZero() && !t.NextRunAt.After(now) &&
		(t.LeaseUntil.IsZero() || !t.LeaseUntil.After(now))
}

// SortClaimed orders claimed tasks earliest due first, then by
// organisation and id (a backend's RETURNING gives no order).
func SortClaimed(ts []Task) {
	slices.SortFunc(ts, func(a, b Task) int {
		if c := a.NextRunAt.Compare(b.NextRunAt); c != 0 {
			return c
		}
		if c := strings.Compare(a.OrgID, b.OrgID); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// ClaimableAt is when a claim may take t: the later of NextRunAt and
// LeaseUntil (zero when it is not due at all). Backends keep it as a
// column so a claim reads one index range.
func ClaimableAt(t Task) time.Time {
	if t.NextRunAt.IsZero() {
		return time.Time{}
	}
	if t.LeaseUntil.After(t.NextRunAt) {
		return t.LeaseUntil
	}
	return t.NextRunAt
}
