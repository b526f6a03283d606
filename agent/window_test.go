package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// smallWindow is a context window a few turns of this test's
// conversation overflow.
var smallWindow = agent.Window{Tokens: 4000, Reserve: 1000}

func windows(ref string) agent.Window {
	if ref == "fake:scripted" {
		return smallWindow
	}
	return agent.Window{}
}

// checkRequest checks one model request against the window: it fits, and
// no call is sent without its result or a result without its call.
func checkRequest(t *testing.T, i int, req llm.Request) {
	t.Helper()
	if n := agent.EstimateTokens(req); n > smallWindow.Budget() {
		t.Errorf("request %d: %d tokens, over the budget of %d", i, n, smallWindow.Budget())
	}
	for j, m := range req.Messages {
		if m.Role == llm.Assistant && len(m.ToolCalls) > 0 {
			if j+1 >= len(req.Messages) || req.Messages[j+1].Role != llm.Tool || req.Messages[j+1].Results[0].CallID != m.ToolCalls[0].ID {
				t.Errorf("request %d: call %s sent without its result", i, m.ToolCalls[0].ID)
			}
		}
		if m.Role == llm.Tool && (j == 0 || len(req.Messages[j-1].ToolCalls) == 0) {
			t.Errorf("request %d: result %s sent without its call", i, m.Results[0].CallID)
		}
	}
}

func marker(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.User && strings.HasPrefix(m.Text, "[") && strings.Contains(m.Text, "earlier messages of this conversation are not shown") {
			return m.Text
		}
	}
	return ""
}

// TestLongConversationFitsTheWindow: a conversation whose history grows
// well past a small context window keeps every model request inside it —
// the oldest turns left out whole, calls with their results, behind a
// marker that says so — and every turn succeeds; the transcript keeps
// everything.
func TestLongConversationFitsTheWindow(t *testing.T) {
	e := newEnv(t, agent.Config{Windows: windows})
	m := llmtest.NewModel()
	ctx := context.Background()
	for i := range 8 {
		m.Push(
			llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call(fmt.Sprintf("k%d", i), "lookup", map[string]string{"text": strings.Repeat("q", 150)})}},
			llmtest.Reply{Text: []string{fmt.Sprintf("answer %d: %s", i, strings.Repeat("a", 1500))}},
		)
		msg := fmt.Sprintf("question %d: %s", i, strings.Repeat("m", 1500))
		out, _ := e.run(ctx, "c1", msg, m)
		if out.Stop != agent.StopAnswer {
			t.Fatalf("turn %d: %+v", i, out)
		}
		reqs := m.Requests()
		last := reqs[len(reqs)-1]
		if got := last.Messages; !containsUser(got, msg) {
			t.Errorf("turn %d: its message was not sent", i)
		}
	}
	reqs := m.Requests()
	for i, req := range reqs {
		checkRequest(t, i, req)
	}
	last := reqs[len(reqs)-1]
	mk := marker(last)
	if mk == "" || !strings.Contains(mk, "read_transcript") {
		t.Fatalf("last request has no marker; it starts with %.80q", last.Messages[0].Text)
	}
	if marker(reqs[0]) != "" {
		t.Errorf("the first turn, which fits, was sent with a marker")
	}
	// Without the cut the last request would not have fitted.
	msgs, err := e.st.ListMessages(ctx, "o1", "c1", 0)
	if err != nil {
		t.Fatal(err)
	}
	full := 0
	for _, msg := range msgs {
		full += len(msg.Content) / 4
	}
	if full <= smallWindow.Budget() {
		t.Fatalf("the conversation (%d tokens) fits the window: the test shows nothing", full)
	}
	if n := len(msgs); n != 8*6 {
		t.Errorf("transcript holds %d messages, want all 48", n)
	}
	// The marker's before= is the first earlier message sent, so that
	// read_transcript reads exactly what is left out.
	var before int64
	if _, err := fmt.Sscanf(mk[strings.Index(mk, "(before="):], "(before=%d)", &before); err != nil {
		t.Fatalf("marker %q: %v", mk, err)
	}
	for _, msg := range msgs {
		if msg.Seq == before && (msg.Role != string(last.Messages[1].Role) || last.Messages[1].Text != msg.Content) {
			t.Errorf("before=%d is %s %.40q; the first message after the marker is %.40q", before, msg.Role, msg.Content, last.Messages[1].Text)
		}
	}
}

func containsUser(ms []llm.Message, text string) bool {
	for _, m := range ms {
		if m.Role == llm.User && m.Text == text {
			return true
		}
	}
	return false
}

// TestContextLengthErrorRetriesTighter: when the provider says the request
// is too long although the estimate fit, the call is retried once with a
// tighter cut, and the turn succeeds.
func TestContextLengthErrorRetriesTighter(t *testing.T) {
	e := newEnv(t, agent.Config{Windows: windows})
	m := llmtest.NewModel()
	ctx := context.Background()
	for i := range 2 {
		m.Push(llmtest.Reply{Text: []string{strings.Repeat("a", 1000)}})
		e.run(ctx, "c1", fmt.Sprintf("q%d %s", i, strings.Repeat("m", 1000)), m)
	}
	m.Push(llmtest.Reply{Fail: &llmtest.Failure{Status: 400, Kind: llm.ErrContextLength, Message: "maximum context length exceeded"}},
		llmtest.Reply{Text: []string{"fine"}})
	out, _ := e.run(ctx, "c1", "again", m)
	if out.Stop != agent.StopAnswer || out.Text != "fine" {
		t.Fatalf("outcome %+v", out)
	}
	reqs := m.Requests()
	first, retry := reqs[len(reqs)-2], reqs[len(reqs)-1]
	if marker(first) != "" || marker(retry) == "" || agent.EstimateTokens(retry) > agent.EstimateTokens(first)/2 {
		t.Errorf("retry of %d tokens (marker %q) after %d", agent.EstimateTokens(retry), marker(retry), agent.EstimateTokens(first))
	}
	if !containsUser(retry.Messages, "again") {
		t.Error("the retry lost the turn's message")
	}
}

// TestContextLengthErrorOnceOnly: a provider that keeps refusing fails
// the turn with its one clear message after one retry, not a loop.
func TestContextLengthErrorOnceOnly(t *testing.T) {
	e := newEnv(t, agent.Config{Windows: windows})
	m := llmtest.NewModel(llmtest.Reply{Text: []string{strings.Repeat("a", 2000)}})
	e.run(context.Background(), "c1", strings.Repeat("m", 2000), m)
	tooLong := llmtest.Reply{Fail: &llmtest.Failure{Status: 400, Kind: llm.ErrContextLength, Message: "too long"}}
	m.Push(tooLong, tooLong, tooLong)
	out, _ := e.run(context.Background(), "c1", "again", m)
	if out.Stop != agent.StopError || len(m.Requests()) != 3 {
		t.Errorf("outcome %+v after %d requests; want an error after 1+2", out, len(m.Requests()))
	}
}
