package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestTasksCommand lists, shows, pauses, resumes and cancels tasks in
// a data folder.
func TestTasksCommand(t *testing.T) {
	data := t.TempDir()
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	due := fixedNow.Add(time.Hour)
	for _, tk := range []store.Task{
		{ID: "task_1", UserID: "ana", Title: "Stretch", Kind: store.ScheduleInterval, Every: 3 * time.Hour},
		{ID: "task_2", UserID: "bruno", Title: "Friday news", Kind: store.ScheduleCron, Spec: "0 18 * * 5"},
	} {
		tk.OrgID, tk.Agent, tk.ConversationID, tk.Instruction = "default", "assistant", "conv_1", "Do the thing."
		tk.Timezone, tk.State, tk.NextRunAt, tk.CreatedAt, tk.UpdatedAt = "Europe/Paris", store.TaskActive, due, fixedNow, fixedNow
		tk.Tools = []string{"web_search"}
		if _, err := st.CreateTask(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	run := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		env := app.Env{Stdout: &out, Stderr: &errb, Now: func() time.Time { return fixedNow },
			Getenv: func(k string) string {
				if k == "QUIVER_DATA" {
					return data
				}
				return ""
			}}
		return cli.Main(context.Background(), args, env), out.String(), errb.String()
	}
	code, out, errs := run("tasks", "list")
	if code != 0 || !strings.Contains(out, "task_1") || !strings.Contains(out, "every 3h") || !strings.Contains(out, "Friday news") {
		t.Fatalf("list: %d\n%s%s", code, out, errs)
	}
	code, out, _ = run("tasks", "list", "--user", "bruno", "--json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0]["id"] != "task_2" {
		t.Fatalf("list --user --json: %d %s", code, out)
	}
	if code, out, _ = run("tasks", "show", "task_1"); code != 0 || !strings.Contains(out, "Do the thing.") || !strings.Contains(out, "tools: web_search") {
		t.Errorf("show: %d %s", code, out)
	}
	if code, out, _ = run("tasks", "pause", "task_1"); code != 0 || !strings.Contains(out, "is paused") {
		t.Errorf("pause: %d %s", code, out)
	}
	if code, out, _ = run("tasks", "resume", "task_1"); code != 0 || !strings.Contains(out, "is active") {
		t.Errorf("resume: %d %s", code, out)
	}
	if code, out, _ = run("tasks", "cancel", "task_2"); code != 0 || !strings.Contains(out, "cancelled task task_2") {
		t.Errorf("cancel: %d %s", code, out)
	}
	for _, args := range [][]string{{"tasks", "show", "task_2"}, {"tasks", "pause"}, {"tasks", "cancel", "task_1", "--user", "x"}, {"tasks", "frobnicate"}} {
		if code, _, _ := run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
