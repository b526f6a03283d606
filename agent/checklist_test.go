package agent_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin/checklist"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/tool"
)

// TestChecklistEvents: each update_tasks call reaches the surface as a
// checklist event carrying the whole list as it now stands, in the
// order of the calls, and a refused list (two steps in progress) sends
// none.
func TestChecklistEvents(t *testing.T) {
	e := newEnv(t, agent.Config{})
	e.cat.Register(checklist.Tool())
	step := func(text, status string) map[string]string { return map[string]string{"text": text, "status": status} }
	m := llmtest.NewModel(
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "update_tasks", map[string]any{"tasks": []any{step("Find", "in_progress"), step("Write", "pending")}})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c2", "update_tasks", map[string]any{"tasks": []any{step("Find", "in_progress"), step("Write", "in_progress")}})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c3", "update_tasks", map[string]any{"tasks": []any{step("Find", "completed"), step("Write", "in_progress")}})}},
		llmtest.Reply{Text: []string{"Done."}},
	)
	f := e.facts("c1")
	f.Agent.Allow = append(f.Agent.Allow, "update_tasks")
	ts := e.cat.Select(f)
	req, err := prompt.Assemble(f, ts)
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]tool.ChecklistItem
	out, err := e.runner.Run(context.Background(), agent.Start{Facts: f, Toolset: ts, Request: req, Model: m, Message: "write it up"}, func(ev agent.Event) {
		if ev.Kind == agent.EventChecklist {
			lists = append(lists, ev.Checklist.Items)
		}
	})
	if err != nil || out.Stop != agent.StopAnswer {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	want := [][]tool.ChecklistItem{
		{{Text: "Find", Status: tool.ChecklistInProgress}, {Text: "Write", Status: tool.ChecklistPending}},
		{{Text: "Find", Status: tool.ChecklistDone}, {Text: "Write", Status: tool.ChecklistInProgress}},
	}
	if diff := cmp.Diff(want, lists); diff != "" {
		t.Errorf("checklist events (-want +got):\n%s", diff)
	}
}
