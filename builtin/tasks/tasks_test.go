package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin/tasks"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
)

// now is a Friday morning in Paris.
var now = time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)

type backend interface {
	store.Tasks
	store.Conversations
}

// world is the tools over a store holding Ana's conversations c1 and c2
// and Bruno's c3.
type world struct {
	st       backend
	schedule *tool.Tool
	update   *tool.Tool
	woken    int
}

func each(t *testing.T, f func(t *testing.T, w *world)) {
	open := map[string]func(t *testing.T) backend{
		"sqlite": func(t *testing.T) backend {
			st, err := sqlite.Open(t.Context(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) backend {
			st, err := postgres.Open(t.Context(), pgtest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			st := open[name](t)
			for _, c := range []store.Conversation{{ID: "c1", UserID: "ana"}, {ID: "c2", UserID: "ana"}, {ID: "c3", UserID: "bruno"}, {ID: "c4", UserID: "ana", Agent: "helper"}} {
				if c.Agent == "" {
					c.Agent = "assistant"
				}
				c.OrgID, c.CreatedAt, c.UpdatedAt = "o1", now, now
				if err := st.PutConversation(t.Context(), c); err != nil {
					t.Fatal(err)
				}
			}
			w := &world{st: st}
			ts := tasks.Tools(tasks.Config{Tasks: st, Conversations: st, Now: func() time.Time { return now },
				IDs: &ids.Sequence{}, Wake: func() { w.woken++ }})
			w.schedule, w.update = ts[0], ts[1]
			f(t, w)
		})
	}
}

var ana = tool.Scope{OrgID: "o1", UserID: "ana", ConversationID: "c1", TurnID: "turn-1", Agent: "assistant", Timezone: "Europe/Paris"}

// catalog is a turn's catalog offering the named tools.
type catalog []string

func (c catalog) Available() []*tool.Tool {
	var out []*tool.Tool
	for _, n := range c {
		out = append(out, tool.New(tool.Spec{Name: n, Description: "x"}, func(context.Context, tool.Scope, struct{}) (string, error) { return "", nil }))
	}
	return out
}
func (c catalog) Declared(string) bool { return true }

func (w *world) call(t *testing.T, tl *tool.Tool, sc tool.Scope, args string) (string, error) {
	t.Helper()
	ctx := tool.WithCatalog(t.Context(), catalog{"web_search", "save_memory", "schedule_task"})
	res, err := tl.Run(ctx, sc, json.RawMessage(args))
	return res.Content, err
}

func TestSchedule(t *testing.T) {
	each(t, func(t *testing.T, w *world) {
		tests := []struct {
			name, args string
			want       string
			next       time.Time
			kind       string
		}{
			{"Reminder", `{"instruction":"Remind Ana to call Bruno.","in":"2h"}`,
				`Scheduled task_1 "Remind Ana to call Bruno.": once at 2026-12-04 12:00 CET; first run Friday 2026-12-04 12:00 CET.`,
				now.Add(2 * time.Hour), store.ScheduleOnce},
			{"WallClock", `{"instruction":"Say good morning.","title":"Morning","at":"2026-12-05 08:30"}`,
				`Scheduled task_2 "Morning": once at 2026-12-05 08:30 CET; first run Saturday 2026-12-05 08:30 CET.`,
				time.Date(2026, 12, 5, 7, 30, 0, 0, time.UTC), store.ScheduleOnce},
			{"Weekly", `{"instruction":"Gather the week's news with web search.","cron":"0 18 * * 5"}`,
				`Scheduled task_3 "Gather the week's news with web search.": cron 0 18 * * 5 (Europe/Paris); first run Friday 2026-12-04 18:00 CET.`,
				time.Date(2026, 12, 4, 17, 0, 0, 0, time.UTC), store.ScheduleCron},
			{"Every", `{"instruction":"Check on Ana's mood.","every":"3h","timezone":"Asia/Ho_Chi_Minh"}`,
				`Scheduled task_4 "Check on Ana's mood.": every 3h; first run Friday 2026-12-04 19:00 +07.`,
				now.Add(3 * time.Hour), store.ScheduleInterval},
		}
		for _, tc := range tests {
			got, err := w.call(t, w.schedule, ana, tc.args)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
			}
		}
		list, err := w.st.ListTasks(t.Context(), "o1", store.TaskFilter{UserID: "ana"})
		if err != nil || len(list) != len(tests) {
			t.Fatalf("stored %d tasks (%v), want %d", len(list), err, len(tests))
		}
		byID := map[string]store.Task{}
		for _, tk := range list {
			byID[tk.ID] = tk
		}
		for i, tc := range tests {
			tk := byID[fmt.Sprintf("task_%d", i+1)]
			if !tk.NextRunAt.Equal(tc.next) || tk.Kind != tc.kind || tk.Agent != "assistant" || tk.ConversationID != "c1" ||
				tk.CreatedTurnID != "turn-1" || tk.State != store.TaskActive {
				t.Errorf("%s stored as %+v", tc.name, tk)
			}
			if d := cmp.Diff([]string{"save_memory", "schedule_task", "web_search"}, tk.Tools); d != "" {
				t.Errorf("%s keeps the turn's tools (-want +got):\n%s", tc.name, d)
			}
		}
		if w.woken != len(tests) {
			t.Errorf("the scheduler was woken %d times, want %d", w.woken, len(tests))
		}
	})
}

func TestScheduleRefusals(t *testing.T) {
	each(t, func(t *testing.T, w *world) {
		scheduled := ana
		scheduled.ScheduledTask = "task_9"
		noConv := ana
		noConv.ConversationID = ""
		tests := []struct {
			name string
			sc   tool.Scope
			args string
			want string
		}{
			{"ScheduledTurn", scheduled, `{"instruction":"x","in":"1h"}`, "a scheduled task's turn cannot schedule further tasks"},
			{"NoConversation", noConv, `{"instruction":"x","in":"1h"}`, "this turn has no conversation"},
			{"Past", ana, `{"instruction":"x","at":"2026-12-03 09:00"}`, "is not in the future"},
			{"TooOften", ana, `{"instruction":"x","cron":"*/2 * * * *"}`, "tasks run at most every 5m0s"},
			{"Two", ana, `{"instruction":"x","in":"1h","every":"2h"}`, "exactly one of at, in, every or cron"},
			{"BadZone", ana, `{"instruction":"x","in":"1h","timezone":"Mars/Olympus"}`, `unknown time zone "Mars/Olympus"`},
			{"Empty", ana, `{"instruction":"  ","in":"1h"}`, "the instruction is empty"},
			{"OthersConversation", ana, `{"instruction":"x","in":"1h","conversation":"c3"}`, `no conversation "c3" of yours`},
			{"NoSuchConversation", ana, `{"instruction":"x","in":"1h","conversation":"c404"}`, `no conversation "c404" of yours`},
			{"OtherAgentsConversation", ana, `{"instruction":"x","in":"1h","conversation":"c4"}`, `is with another agent`},
		}
		for _, tc := range tests {
			_, err := w.call(t, w.schedule, tc.sc, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) || tool.IsInfra(err) {
				t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
			}
		}
		if list, _ := w.st.ListTasks(t.Context(), "o1", store.TaskFilter{}); len(list) != 0 {
			t.Errorf("refusals stored tasks: %d", len(list))
		}
		// Another of her own conversations is fine.
		if _, err := w.call(t, w.schedule, ana, `{"instruction":"x","in":"1h","conversation":"c2"}`); err != nil {
			t.Errorf("scheduling into her other conversation: %v", err)
		}
		// The person's cap, in words the model can pass on.
		for i := 1; i < store.MaxTasksPerUser; i++ {
			if _, err := w.call(t, w.schedule, ana, `{"instruction":"x","every":"1h"}`); err != nil {
				t.Fatal(err)
			}
		}
		_, err := w.call(t, w.schedule, ana, `{"instruction":"one too many","every":"1h"}`)
		if err == nil || !strings.HasPrefix(err.Error(), "scheduled task limit reached: you have 25 scheduled tasks") {
			t.Errorf("past the cap: %v", err)
		}
	})
}

func TestUpdate(t *testing.T) {
	each(t, func(t *testing.T, w *world) {
		if _, err := w.call(t, w.schedule, ana, `{"instruction":"Check on Ana.","title":"Check-in","every":"3h"}`); err != nil {
			t.Fatal(err)
		}
		bruno := ana
		bruno.UserID, bruno.ConversationID = "bruno", "c3"
		if _, err := w.call(t, w.schedule, bruno, `{"instruction":"Bruno's own.","in":"1h"}`); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name, args, want string
		}{
			{"List", `{"action":"list"}`, "1 scheduled tasks:\n- task_1 \"Check-in\" (active): every 3h; next Friday 2026-12-04 13:00 CET"},
			{"Pause", `{"action":"pause","task_id":"task_1"}`, `task_1 "Check-in" is paused: every 3h; next run none.`},
			{"Resume", `{"action":"resume","task_id":"task_1"}`, `task_1 "Check-in" is active: every 3h; next run Friday 2026-12-04 13:00 CET.`},
			{"Edit", `{"action":"edit","task_id":"task_1","cron":"0 9 * * 1","instruction":"Ask Ana about her weekend."}`,
				`task_1 "Check-in" is active: cron 0 9 * * 1 (Europe/Paris); next run Monday 2026-12-07 09:00 CET.`},
			{"Cancel", `{"action":"cancel","task_id":"task_1"}`, `Cancelled task_1 "Check-in".`},
			{"ListEmpty", `{"action":"list"}`, "You have no scheduled tasks."},
		}
		for _, s := range steps {
			got, err := w.call(t, w.update, ana, s.args)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if got != s.want {
				t.Errorf("%s:\n got %q\nwant %q", s.name, got, s.want)
			}
		}
		for _, tc := range []struct{ name, args, want string }{
			{"OthersTask", `{"action":"pause","task_id":"task_2"}`, `no task "task_2" of yours`},
			{"OthersCancel", `{"action":"cancel","task_id":"task_2"}`, `no task "task_2" of yours`},
			{"NoID", `{"action":"pause"}`, "give task_id"},
			{"EditNothing", `{"action":"edit","task_id":"task_2"}`, `no task "task_2" of yours`},
		} {
			if _, err := w.call(t, w.update, ana, tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
		}
		if _, err := w.st.GetTask(t.Context(), "o1", "task_2"); err != nil {
			t.Errorf("Bruno's task after Ana's attempts: %v", err)
		}
		if _, err := w.call(t, w.update, bruno, `{"action":"edit","task_id":"task_2"}`); err == nil || !strings.Contains(err.Error(), "an edit needs what changes") {
			t.Errorf("an empty edit: %v", err)
		}
		// A task's own turn may pause or cancel, never give a new time
		// or resume: that would be scheduling under another name.
		run := bruno
		run.ScheduledTask = "task_2"
		for _, args := range []string{`{"action":"edit","task_id":"task_2","in":"5m"}`, `{"action":"resume","task_id":"task_2"}`} {
			if _, err := w.call(t, w.update, run, args); err == nil || !strings.Contains(err.Error(), "a scheduled task's turn cannot") {
				t.Errorf("%s in a scheduled turn: %v", args, err)
			}
		}
		if got, err := w.call(t, w.update, run, `{"action":"pause","task_id":"task_2"}`); err != nil || !strings.Contains(got, "is paused") {
			t.Errorf("a scheduled turn pausing its task: %q, %v", got, err)
		}
	})
}

func TestWithoutStore(t *testing.T) {
	ts := tasks.Tools(tasks.Config{})
	for i, tl := range ts {
		args := []string{`{"instruction":"x","in":"1h"}`, `{"action":"list"}`}[i]
		_, err := tl.Run(t.Context(), ana, json.RawMessage(args))
		if !tool.IsInfra(err) || !errors.Is(err, store.ErrNoStore) {
			t.Errorf("%s without a store: %v, want an infrastructure error wrapping ErrNoStore", tl.Name(), err)
		}
	}
}
