package agent_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin/chat"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/webchat"
	"github.com/quiverhq/quiver/tool"
)

// TestMessageToolEvents: a turn whose model pins and reacts with the
// message tools on the web chat reaches the surface as messages events,
// in call order, and the marks are stored; a call on a message that
// does not exist sends none.
func TestMessageToolEvents(t *testing.T) {
	e := newEnv(t, agent.Config{})
	ctx := context.Background()
	if err := e.st.PutConversation(ctx, store.Conversation{ID: "c1", OrgID: "o1", UserID: "u1", Agent: "helper", CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.AppendMessages(ctx, "o1", []store.Message{
		{ConversationID: "c1", Role: store.RoleUser, Content: "Fly Monday?", CreatedAt: t0},
		{ConversationID: "c1", Role: "assistant", Content: "Monday works.", CreatedAt: t0},
	}); err != nil {
		t.Fatal(err)
	}
	e.cat.Register(chat.Tools(chat.Config{Surfaces: chat.Set{surface.WebChat: webchat.New(webchat.Config{Store: e.st})}})...)
	m := llmtest.NewModel(
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "manage_message", map[string]any{"message_id": "2", "action": "pin"})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c2", "interact_with_message", map[string]any{"message_id": "1", "action": "react", "emoji": "👍"})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c3", "interact_with_message", map[string]any{"message_id": "99", "action": "react", "emoji": "👍"})}},
		llmtest.Reply{Text: []string{"Pinned it."}},
	)
	f := e.facts("c1")
	f.Agent.Allow = append(f.Agent.Allow, chat.FamilyManage, chat.FamilyInteract)
	ts := e.cat.Select(f)
	req, err := prompt.Assemble(f, ts)
	if err != nil {
		t.Fatal(err)
	}
	var got []tool.MessageChange
	out, err := e.runner.Run(ctx, agent.Start{Facts: f, Toolset: ts, Request: req, Model: m, Message: "pin the plan"}, func(ev agent.Event) {
		if ev.Kind == agent.EventMessages {
			got = append(got, ev.Messages...)
		}
	})
	if err != nil || out.Stop != agent.StopAnswer {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	want := []tool.MessageChange{
		{Action: "pin", Conversation: "c1", Message: "2"},
		{Action: "react", Conversation: "c1", Message: "1", Emoji: "👍"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages events (-want +got):\n%s", diff)
	}
	marks, err := e.st.ListMessageMarks(ctx, "o1", "c1")
	if err != nil || len(marks) != 2 || marks[1].PinnedAt.IsZero() || len(marks[0].Reactions) != 1 {
		t.Errorf("stored marks %+v, %v", marks, err)
	}
}
