package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// sent rebuilds the messages one replayed call sent.
func sent(r agent.Replay, c agent.Call) []llm.Message {
	var out []llm.Message
	for _, i := range c.Kept {
		out = append(out, r.Messages[i])
	}
	if c.Cut.Marker != "" {
		out = append(out, llm.Message{Role: llm.User, Text: c.Cut.Marker})
	}
	return append(out, r.Messages[c.From:c.End]...)
}

// TestReplayIsWhatWasSent: replaying each stored turn of a conversation
// that outgrows a small context window gives, call by call, exactly the
// messages the model received — earlier tool results, the marker of a
// cut and the turn's own calls and results included.
func TestReplayIsWhatWasSent(t *testing.T) {
	e := newEnv(t, agent.Config{Windows: windows})
	m := llmtest.NewModel()
	ctx := context.Background()
	var turns []string
	for i := range 6 {
		m.Push(
			llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call(fmt.Sprintf("k%d", i), "lookup", map[string]string{"text": strings.Repeat("q", 150)})}},
			llmtest.Reply{Text: []string{fmt.Sprintf("answer %d: %s", i, strings.Repeat("a", 1500))}},
		)
		out, _ := e.run(ctx, "c1", fmt.Sprintf("question %d: %s", i, strings.Repeat("m", 1500)), m)
		if out.Stop != agent.StopAnswer {
			t.Fatalf("turn %d: %+v", i, out)
		}
		turns = append(turns, out.TurnID)
	}
	history, err := e.st.ListMessages(ctx, "o1", "c1", 0)
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	cuts, omitted := 0, 0
	for i, id := range turns {
		s := e.start("c1", "", m)
		s.Facts.TurnID, s.History = id, history
		r := e.runner.Replay(s, 2)
		if len(r.Calls) != 2 {
			t.Fatalf("turn %d: %d calls, want 2", i, len(r.Calls))
		}
		for k, c := range r.Calls {
			if d := cmp.Diff(reqs[2*i+k].Messages, sent(r, c)); d != "" {
				t.Errorf("turn %d, call %d (-sent +replayed):\n%s", i, k+1, d)
			}
			if c.Cut.Marker != "" {
				cuts++
			}
		}
		if r.Messages[r.TurnStart].Role != llm.User || r.Calls[1].End <= r.Calls[0].End {
			t.Errorf("turn %d: starts at %d (%s), calls end at %d and %d", i, r.TurnStart, r.Messages[r.TurnStart].Role, r.Calls[0].End, r.Calls[1].End)
		}
		omitted += r.Omitted
	}
	if cuts == 0 || omitted == 0 {
		t.Fatalf("%d calls cut, %d messages omitted: the test shows nothing of cuts", cuts, omitted)
	}
}

// TestReplayOfADraft: a turn not run yet replays as one call, the
// history then its context message and message.
func TestReplayOfADraft(t *testing.T) {
	e := newEnv(t, agent.Config{})
	s := e.start("c1", "what is 2+2?", nil)
	s.Facts.TurnID = "turn_draft"
	r := e.runner.Replay(s, 0)
	want := []llm.Message{{Role: llm.User, Text: s.Request.Context}, {Role: llm.User, Text: "what is 2+2?"}}
	if len(r.Calls) != 1 || r.TurnStart != 0 {
		t.Fatalf("replay %+v, want one call from the start", r)
	}
	if d := cmp.Diff(want, sent(r, r.Calls[0])); d != "" {
		t.Errorf("the draft's call (-want +got):\n%s", d)
	}
	if r.Calls[0].Cut.Window.Tokens == 0 || r.Calls[0].Cut.Tokens == 0 {
		t.Errorf("the draft's cut %+v says nothing of the window", r.Calls[0].Cut)
	}
}

// TestReplayOfALongTurn: a turn whose own calls outgrow the window is
// cut inside the turn; its replay keeps the turn's messages before the
// marker exactly as the run sent them.
func TestReplayOfALongTurn(t *testing.T) {
	e := newEnv(t, agent.Config{Windows: windows, MaxSteps: 20})
	m := llmtest.NewModel()
	ctx := context.Background()
	const steps = 12
	for i := range steps - 1 {
		m.Push(llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call(fmt.Sprintf("k%d", i), "lookup", map[string]string{"text": strings.Repeat("q", 1500)})}})
	}
	m.Push(llmtest.Reply{Text: []string{"done"}})
	out, _ := e.run(ctx, "c1", "look everything up", m)
	if out.Stop != agent.StopAnswer {
		t.Fatalf("turn: %+v", out)
	}
	history, err := e.st.ListMessages(ctx, "o1", "c1", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := e.start("c1", "", m)
	s.Facts.TurnID, s.History = out.TurnID, history
	r := e.runner.Replay(s, steps)
	reqs := m.Requests()
	if len(r.Calls) != steps || len(reqs) != steps {
		t.Fatalf("%d calls replayed, %d made; want %d", len(r.Calls), len(reqs), steps)
	}
	kept := 0
	for k, c := range r.Calls {
		if d := cmp.Diff(reqs[k].Messages, sent(r, c)); d != "" {
			t.Errorf("call %d (-sent +replayed):\n%s", k+1, d)
		}
		kept += len(c.Kept)
	}
	if kept == 0 {
		t.Fatal("no call kept the turn's messages before a cut: the test shows nothing of cuts inside a turn")
	}
}
