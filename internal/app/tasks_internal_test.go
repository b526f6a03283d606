package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func (c *testClock) Set(t time.Time)     { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }
func toolNames(req llm.Request) []string { return namesOf(req.Tools) }

func namesOf(defs []llm.ToolDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

// TestScheduledTaskRunsLateAsATurn: Ana asks over the HTTP API for a
// reminder in ten minutes and the model schedules it; the server is then
// down for three hours. The scheduler runs the missed reminder once, as
// a turn of her conversation with the tools she had except
// schedule_task, its context message saying how late; a task of hers
// after she is disabled is skipped.
func TestScheduledTaskRunsLateAsATurn(t *testing.T) {
	ctx := context.Background()
	model := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "schedule_task", map[string]any{
			"instruction": "Remind Ana to stretch.", "title": "Stretch", "in": "10m"})}},
		llmtest.Reply{Text: []string{"I will remind you at 09:10."}},
		llmtest.Reply{Text: []string{"Time to stretch, Ana! (Sorry, this reminder is late.)"}},
	)
	sq, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC) // 09:00 in Paris
	c := &testClock{t: start}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(sq.CreateOrg(ctx, store.Org{ID: "acme", Name: "Acme", CreatedAt: start}))
	must(sq.CreateUser(ctx, store.User{ID: "ana", OrgID: "acme", DisplayName: "Ana", Timezone: "Europe/Paris", Role: store.RoleMember, CreatedAt: start, UpdatedAt: start}))
	must(sq.PutAgent(ctx, store.StoredAgent{OrgID: "acme", Name: "helper", UpdatedAt: start,
		Definition: []byte("name: helper\nprompt: You help.\nmodel: openai:gpt-test\ncapabilities: {tools: true}\ntools: [tasks, calculate]\n")}))
	must(sq.PutConversation(ctx, store.Conversation{ID: "conv_1", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: start, UpdatedAt: start}))
	tok, err := (&accounts.Service{Store: sq}).Issue(ctx, store.Credential{Kind: store.CredAPIToken, OrgID: "acme", UserID: "ana", CreatedAt: start})
	must(err)

	vars := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model.URL}
	env := Env{Getenv: func(k string) string { return vars[k] }, Now: c.Now}
	env.defaults()
	rt := newRuntime(sq, nil, t.TempDir(), config.Config{}, env)
	defer rt.close()
	eng := rt.newEngine(config.Config{}, nil, true, env)
	srv := httptest.NewServer(rt.apiHandler(eng, config.Config{}, false, nil, env))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/api/conversations/conv_1/messages", strings.NewReader(`{"message":"Remind me in 10 minutes to stretch"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "remind you at 09:10") {
		t.Fatalf("the scheduling turn: %d %s", resp.StatusCode, body)
	}
	list, err := sq.ListTasks(ctx, "acme", store.TaskFilter{UserID: "ana"})
	if err != nil || len(list) != 1 {
		t.Fatalf("tasks after the turn: %+v, %v", list, err)
	}
	task := list[0]
	if !task.NextRunAt.Equal(start.Add(10*time.Minute)) || task.ConversationID != "conv_1" || task.Agent != "helper" ||
		!slices.Contains(task.Tools, "calculate") || !slices.Contains(task.Tools, "schedule_task") {
		t.Fatalf("the scheduled task: %+v", task)
	}

	// Three hours of downtime, then the server's scheduler starts.
	c.Add(3 * time.Hour)
	rc := config.Config{}.Runs.Config()
	rc.Runs, rc.Events, rc.Turns, rc.Now, rc.Logger, rc.Exclusive = sq, sq, sq, c.Now, env.Logger, true
	reg, err := runs.Open(ctx, rc)
	must(err)
	sched, err := rt.newScheduler(eng, reg, config.Scheduler{}, env)
	must(err)
	if n, err := sched.Tick(ctx); n != 1 || err != nil {
		t.Fatalf("the scheduler's first look: %d runs, %v", n, err)
	}
	sched.Wait()
	seen := model.Seen()
	if len(seen) != 3 {
		t.Fatalf("%d model calls, want the scheduled turn's third", len(seen))
	}
	run := seen[2].Req
	if got := toolNames(run); slices.Contains(got, "schedule_task") || !slices.Contains(got, "calculate") || !slices.Contains(got, "update_scheduled_task") {
		t.Errorf("the scheduled turn declared %v: want the task's tools without schedule_task", got)
	}
	var text strings.Builder
	for _, m := range run.Messages {
		text.WriteString(m.Text + "\n")
	}
	for _, want := range []string{`This turn runs a task the caller scheduled ("Stretch", due Friday 2026-12-04 09:10 CET)`,
		"It runs 2 h 50 min late", `Scheduled task "Stretch": Remind Ana to stretch.`} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the scheduled turn's messages do not say %q:\n%s", want, text.String())
		}
	}
	msgs, err := sq.ListMessages(ctx, "acme", "conv_1", 0)
	must(err)
	if last := msgs[len(msgs)-1]; last.Role != "assistant" || !strings.Contains(last.Content, "Time to stretch") {
		t.Errorf("the conversation ends with %s %q", last.Role, last.Content)
	}
	done, err := sq.GetTask(ctx, "acme", task.ID)
	must(err)
	if done.State != store.TaskDone || done.LastStatus != store.TaskRunOK || done.LastLate != 2*time.Hour+50*time.Minute || done.Runs != 1 {
		t.Errorf("after its run: %+v", done)
	}

	// A disabled person's task does not run.
	next := c.Now().Add(time.Minute)
	_, err = sq.CreateTask(ctx, store.Task{OrgID: "acme", ID: "task_later", UserID: "ana", Agent: "helper", ConversationID: "conv_1",
		Title: "Later", Instruction: "Say hi.", Kind: store.ScheduleOnce, Spec: next.Format(time.RFC3339), Timezone: "UTC",
		State: store.TaskActive, NextRunAt: next, CreatedAt: c.Now(), UpdatedAt: c.Now()})
	must(err)
	must((&accounts.Service{Store: sq, Now: c.Now}).DisableUser(ctx, "acme", "admin", "ana"))
	c.Add(2 * time.Minute)
	if n, _ := sched.Tick(ctx); n != 1 {
		t.Fatalf("the disabled person's task was not claimed")
	}
	sched.Wait()
	if len(model.Seen()) != 3 {
		t.Error("a disabled person's task ran a turn")
	}
	skipped, _ := sq.GetTask(ctx, "acme", "task_later")
	if skipped.LastStatus != store.TaskRunSkipped || skipped.LastError != "the person is disabled" {
		t.Errorf("the disabled person's task: %+v", skipped)
	}
}
