package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

func tasksFixture(t *testing.T) (*fixture, *int) {
	woken := new(int)
	f := newFixture(t, func(c *httpapi.Config) {
		c.Tasks = c.Store.(store.Store)
		c.WakeScheduler = func() { *woken++ }
	})
	f.conversation("org_a", "bob", "conv_b")
	for _, tk := range []store.Task{
		{ID: "task_bob", UserID: "bob", Title: "Stretch", Kind: store.ScheduleInterval, Every: 3 * time.Hour},
		{ID: "task_carol", UserID: "carol", Title: "Water", Kind: store.ScheduleCron, Spec: "0 9 * * *"},
	} {
		tk.OrgID, tk.Agent, tk.ConversationID, tk.Instruction = "org_a", "helper", "conv_b", "Remind them."
		tk.Timezone, tk.State, tk.NextRunAt, tk.CreatedAt, tk.UpdatedAt = "Europe/Paris", store.TaskActive, start.Add(time.Hour), start, start
		if _, err := f.st.CreateTask(f.ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	return f, woken
}

func TestTasksListAndReach(t *testing.T) {
	f, _ := tasksFixture(t)
	var list struct{ Tasks []httpapi.Task }
	f.ok(f.do(f.bob, http.MethodGet, "/api/tasks", nil), http.StatusOK, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != "task_bob" || list.Tasks[0].Schedule != "every 3h" || list.Tasks[0].NextRunAt == nil {
		t.Errorf("bob's list: %+v", list.Tasks)
	}
	if r := f.do(f.bob, http.MethodGet, "/api/tasks?all=true", nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("a member listing the organisation's: %d", r.StatusCode)
	}
	f.ok(f.do(f.alice, http.MethodGet, "/api/tasks?all=true", nil), http.StatusOK, &list)
	if len(list.Tasks) != 2 {
		t.Errorf("the admin's list of all: %d tasks", len(list.Tasks))
	}
	f.ok(f.do(f.dave, http.MethodGet, "/api/tasks?all=true", nil), http.StatusOK, &list)
	if len(list.Tasks) != 0 {
		t.Errorf("another organisation's admin sees %d tasks", len(list.Tasks))
	}
	for _, who := range []*who{f.carol, f.dave} {
		if r := f.do(who, http.MethodGet, "/api/tasks/task_bob", nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("another person's task: %d", r.StatusCode)
		}
		if r := f.do(who, http.MethodDelete, "/api/tasks/task_bob", nil); r.StatusCode != http.StatusNotFound {
			t.Errorf("deleting another person's task: %d", r.StatusCode)
		}
	}
	var got httpapi.Task
	f.ok(f.do(f.alice, http.MethodGet, "/api/tasks/task_bob", nil), http.StatusOK, &got)
	if got.UserID != "bob" || got.Instruction != "Remind them." {
		t.Errorf("the admin's read: %+v", got)
	}
}

func TestTaskPatchDelete(t *testing.T) {
	f, woken := tasksFixture(t)
	var got httpapi.Task
	f.ok(f.do(f.bob, http.MethodPatch, "/api/tasks/task_bob", map[string]any{"version": 0, "cron": "0 18 * * 5", "title": "Friday news"}),
		http.StatusOK, &got)
	// 2026-03-01 is a Sunday: the next Friday 18:00 in Paris (CET).
	if got.Kind != store.ScheduleCron || got.Title != "Friday news" || got.Version != 1 ||
		got.NextRunAt == nil || !got.NextRunAt.Equal(time.Date(2026, 3, 6, 17, 0, 0, 0, time.UTC)) {
		t.Errorf("after the edit: %+v", got)
	}
	if r := f.do(f.bob, http.MethodPatch, "/api/tasks/task_bob", map[string]any{"version": 0, "state": "paused"}); r.StatusCode != http.StatusConflict {
		t.Errorf("a stale version: %d", r.StatusCode)
	}
	for name, body := range map[string]map[string]any{
		"TooOften":  {"version": 1, "cron": "* * * * *"},
		"TwoKinds":  {"version": 1, "in": "1h", "every": "2h"},
		"BadZone":   {"version": 1, "in": "1h", "timezone": "Mars/Olympus"},
		"EmptyText": {"version": 1, "instruction": " "},
	} {
		r := f.do(f.bob, http.MethodPatch, "/api/tasks/task_bob", body)
		if r.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", name, r.StatusCode, r.body)
		}
	}
	f.ok(f.do(f.bob, http.MethodGet, "/api/tasks/task_bob", nil), http.StatusOK, &got)
	if got.Version != 1 || got.Title != "Friday news" {
		t.Errorf("refused changes changed the task: %+v", got)
	}
	// An admin pauses anyone's, but does not edit their words.
	f.ok(f.do(f.alice, http.MethodPatch, "/api/tasks/task_bob", map[string]any{"version": 1, "state": "paused"}), http.StatusOK, &got)
	if got.State != store.TaskPaused {
		t.Errorf("the admin's pause: %+v", got)
	}
	if r := f.do(f.alice, http.MethodPatch, "/api/tasks/task_bob", map[string]any{"version": 2, "instruction": "Mine now."}); r.StatusCode != http.StatusForbidden {
		t.Errorf("an admin editing another's instruction: %d", r.StatusCode)
	}
	if *woken != 2 {
		t.Errorf("the scheduler was woken %d times, want 2 (each change)", *woken)
	}
	if r := f.do(f.bob, http.MethodDelete, "/api/tasks/task_bob", nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("delete: %d", r.StatusCode)
	}
	if r := f.do(f.bob, http.MethodGet, "/api/tasks/task_bob", nil); r.StatusCode != http.StatusNotFound || !strings.Contains(string(r.body), "no such task") {
		t.Errorf("after the delete: %d %s", r.StatusCode, r.body)
	}
}
