package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/anthropic"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/openai"
)

// concurrency counts the "wait" calls in their handler: each entry holds
// until release is closed, and peak is the most inside at once.
type concurrency struct {
	mu      sync.Mutex
	inside  int
	peak    int
	entered int
	release chan struct{}
}

func (c *concurrency) block(ctx context.Context) {
	c.mu.Lock()
	c.inside++
	c.entered++
	c.peak = max(c.peak, c.inside)
	c.mu.Unlock()
	select {
	case <-c.release:
	case <-ctx.Done():
	}
	c.mu.Lock()
	c.inside--
	c.mu.Unlock()
}

func (c *concurrency) counts() (inside, peak, entered int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inside, c.peak, c.entered
}

// lastResults is what the model read back after its latest step.
func lastResults(t *testing.T, m *llmtest.Model) []llm.ToolResult {
	t.Helper()
	reqs := m.Requests()
	msgs := reqs[len(reqs)-1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.Tool {
		t.Fatalf("last message sent is %s, want tool results", last.Role)
	}
	return last.Results
}

// TestCallsPerStepAndConcurrency: a reply asking for 200 read-only calls
// runs the first 16 (the default per step), at most 4 at once (the
// default), and answers the 17th with a refusal naming the limit and
// standing for the other 183, which are left out of the transcript; the
// turn then goes on to the model's answer. synctest.Wait makes "at most 4
// inside" exact: every call that could start has started.
func TestCallsPerStepAndConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, agent.Config{})
		c := &concurrency{release: make(chan struct{})}
		e.block = c.block
		calls := make([]llm.ToolCall, 200)
		for i := range calls {
			calls[i] = llmtest.Call(fmt.Sprintf("w%d", i), "wait", map[string]string{})
		}
		m := llmtest.NewModel(llmtest.Reply{ToolCalls: calls}, llmtest.Reply{Text: []string{"done"}})
		var out agent.Outcome
		done := make(chan struct{})
		go func() {
			defer close(done)
			out, _ = e.run(context.Background(), "c1", "go", m)
		}()
		synctest.Wait()
		if inside, _, _ := c.counts(); inside != agent.DefaultMaxConcurrentCalls {
			t.Errorf("%d calls inside at once, want %d", inside, agent.DefaultMaxConcurrentCalls)
		}
		close(c.release)
		<-done
		if _, peak, entered := c.counts(); peak != agent.DefaultMaxConcurrentCalls || entered != agent.DefaultMaxCallsPerStep {
			t.Errorf("peak %d calls at once, %d run; want %d and %d", peak, entered, agent.DefaultMaxConcurrentCalls, agent.DefaultMaxCallsPerStep)
		}
		if out.Stop != agent.StopAnswer || out.Text != "done" {
			t.Errorf("outcome %+v, want the model's answer", out)
		}
		res := lastResults(t, m)
		if len(res) != agent.DefaultMaxCallsPerStep+1 {
			t.Fatalf("%d results, want one per call run and one refusal", len(res))
		}
		refusal := "Not run: this reply asked for 200 tool calls, more than the limit of 16 per step; this call and 183 more past the limit " +
			"were not run, and those 183 are left out of the conversation; ask again with at most 16 calls at once."
		for i, r := range res {
			ran := i < agent.DefaultMaxCallsPerStep
			if r.CallID != fmt.Sprintf("w%d", i) || ran == (r.Content == refusal) || ran == r.IsError {
				t.Errorf("result %d %+v: ran %v", i, r, ran)
			}
		}
	})
}

// TestCallsPerTurn: the turn's budget spans its steps; calls past it are
// refused with one line, and the model still answers.
func TestCallsPerTurn(t *testing.T) {
	e := newEnv(t, agent.Config{MaxCallsPerStep: 3, MaxCallsPerTurn: 5})
	lookups := func(names ...string) llmtest.Reply {
		var r llmtest.Reply
		for _, n := range names {
			r.ToolCalls = append(r.ToolCalls, llmtest.Call(n, "lookup", map[string]string{"text": n}))
		}
		return r
	}
	m := llmtest.NewModel(lookups("a", "b", "c"), lookups("d", "e", "f"), lookups("g"), llmtest.Reply{Text: []string{"enough"}})
	out, _ := e.run(context.Background(), "c1", "go", m)
	if out.Stop != agent.StopAnswer || out.Text != "enough" {
		t.Errorf("outcome %+v, want the model's answer", out)
	}
	slices.Sort(e.order) // reads of one step run concurrently
	if diff := cmp.Diff([]string{"lookup a", "lookup b", "lookup c", "lookup d", "lookup e"}, e.order); diff != "" {
		t.Errorf("calls run (-want +got):\n%s", diff)
	}
	const refusal = "Not run: this turn has used its limit of 5 tool calls; answer with what you have."
	reqs := m.Requests()
	step2 := reqs[2].Messages[len(reqs[2].Messages)-1].Results
	if len(step2) != 3 || step2[1].Content != "found e" || step2[2].Content != refusal || !step2[2].IsError {
		t.Errorf("second step's results %+v", step2)
	}
	if got := lastResults(t, m); len(got) != 1 || got[0].Content != refusal {
		t.Errorf("third step's results %+v", got)
	}
}

// TestCallsPerTurnAcrossResume: a resumed turn counts the calls it ran
// before its pause.
func TestCallsPerTurnAcrossResume(t *testing.T) {
	e := newEnv(t, agent.Config{MaxCallsPerTurn: 2})
	m := llmtest.NewModel(llmtest.Reply{ToolCalls: []llm.ToolCall{
		llmtest.Call("l1", "lookup", map[string]string{"text": "x"}),
		llmtest.Call("q1", "ask_clarifying_question", map[string]any{"question": "Which year?"}),
	}})
	out, _ := e.run(context.Background(), "c1", "go", m)
	if out.Stop != agent.StopPause {
		t.Fatalf("outcome %+v, want a pause", out)
	}
	m.Push(llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("l2", "lookup", map[string]string{"text": "y"})}}, llmtest.Reply{Text: []string{"ok"}})
	s := e.start("c1", "2025", m)
	s.Facts.TurnID = out.TurnID
	s.Toolset = e.cat.Restore(s.Toolset.Names())
	out2, err := e.runner.Resume(context.Background(), s, nil)
	if err != nil || out2.Stop != agent.StopAnswer {
		t.Fatalf("resume: %+v, %v", out2, err)
	}
	if got := lastResults(t, m); len(got) != 1 || !strings.HasPrefix(got[0].Content, "Not run: this turn has used its limit of 2") {
		t.Errorf("results after resume %+v", got)
	}
	if diff := cmp.Diff([]string{"lookup x"}, e.order); diff != "" {
		t.Errorf("calls run (-want +got):\n%s", diff)
	}
}

// TestRefusedCallsKeptCompactly: a reply asking for 200 calls, three of
// them without a name, keeps in the transcript the 16 it runs and one
// refused call per reason, each answered with a refusal that counts the
// calls it stands for and marked as refused; the rest are neither stored
// nor sent back. Through each adapter against its provider's fake, which
// refuses a request whose calls are not each answered once (as the real
// APIs do), the next request is valid and the model answers.
func TestRefusedCallsKeptCompactly(t *testing.T) {
	for _, tc := range []struct {
		fake     llmtest.Fake
		newModel func(t *testing.T, url string) llm.Model
	}{
		{llmtest.OpenAI{}, func(t *testing.T, url string) llm.Model {
			m, err := openai.New(openai.Config{BaseURL: url, Model: "scripted", Provider: "fake", APIKey: "test-key"})
			must(t, err)
			return m
		}},
		{llmtest.Anthropic{}, func(t *testing.T, url string) llm.Model {
			m, err := anthropic.New(anthropic.Config{BaseURL: url, Model: "scripted", APIKey: "test-key"})
			must(t, err)
			return m
		}},
		{llmtest.Gemini{}, func(t *testing.T, url string) llm.Model {
			m, err := gemini.New(t.Context(), gemini.Config{BaseURL: url, Model: "scripted", APIKey: "test-key"})
			must(t, err)
			return m
		}},
	} {
		t.Run(tc.fake.Name(), func(t *testing.T) {
			e := newEnv(t, agent.Config{})
			var calls []llm.ToolCall
			for i := range 197 {
				if i == 5 || i == 100 || i == 150 {
					calls = append(calls, llmtest.Call(fmt.Sprintf("n%d", i), "", map[string]string{}))
				}
				calls = append(calls, llmtest.Call(fmt.Sprintf("l%d", i), "lookup", map[string]string{"text": strconv.Itoa(i)}))
			}
			srv := llmtest.Start(t, tc.fake, llmtest.Reply{ToolCalls: calls}, llmtest.Reply{Text: []string{"done"}})
			out, evs := e.run(t.Context(), "c1", "go", tc.newModel(t, srv.URL))
			if out.Stop != agent.StopAnswer || out.Text != "done" {
				t.Fatalf("outcome %+v, events %v", out, kinds(evs))
			}
			msgs, err := e.st.ListMessages(t.Context(), "o1", "c1", 0)
			must(t, err)
			var stored, refused []string
			for _, m := range msgs {
				switch {
				case m.Role == "tool_call":
					stored = append(stored, m.ToolName)
				case m.Role == string(llm.Tool) && m.Refused:
					refused = append(refused, m.Content)
				case m.Role == string(llm.Tool) && m.IsError:
					t.Errorf("result %q is an error but not marked refused", m.Content)
				}
			}
			// 16 lookups run, the first nameless call (the 6th) and the
			// first lookup past the limit.
			if len(stored) != agent.DefaultMaxCallsPerStep+2 {
				t.Errorf("%d calls stored, want 16 run and 2 refused: %v", len(stored), stored)
			}
			want := []string{
				"Not run: this tool call has no tool name, nor have 2 more calls of this reply, which are left out of the conversation; " +
					"call again with the name of one of your tools.",
				"Not run: this reply asked for 200 tool calls, more than the limit of 16 per step; this call and 180 more past the limit " +
					"were not run, and those 180 are left out of the conversation; ask again with at most 16 calls at once.",
			}
			if d := cmp.Diff(want, refused); d != "" {
				t.Errorf("refusals stored (-want +got):\n%s", d)
			}
			seen := srv.Seen()
			sent := seen[len(seen)-1].Req.Messages
			if n := len(sent[len(sent)-1].Results); n != agent.DefaultMaxCallsPerStep+2 {
				t.Errorf("%d results sent back, want 18", n)
			}
			toolEvents := 0
			for _, ev := range evs {
				if ev.Kind == agent.EventToolCall || ev.Kind == agent.EventToolResult {
					toolEvents++
				}
			}
			if toolEvents != 2*(agent.DefaultMaxCallsPerStep+2) {
				t.Errorf("%d tool call and result events, want one of each per call kept (36)", toolEvents)
			}
		})
	}
}

// TestNamelessCall: a call without a name, as a provider streams it, is
// answered with a refusal and the turn goes on (it used to fail the whole
// turn as a provider error). The model runs through the OpenAI adapter
// against its fake server, which is where the call used to be rejected.
func TestNamelessCall(t *testing.T) {
	e := newEnv(t, agent.Config{})
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{
			llmtest.Call("n1", "", map[string]string{}),
			llmtest.Call("n2", "lookup", map[string]string{"text": "x"}),
		}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("n3", "  ", map[string]string{})}},
		llmtest.Reply{Text: []string{"done"}},
	)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "scripted", Provider: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	out, evs := e.run(context.Background(), "c1", "go", m)
	if out.Stop != agent.StopAnswer || out.Text != "done" {
		t.Fatalf("outcome %+v, events %v", out, kinds(evs))
	}
	const refusal = "Not run: this tool call has no tool name; call again with the name of one of your tools."
	var got []string
	for _, s := range srv.Seen()[1:] {
		msgs := s.Req.Messages
		for _, r := range msgs[len(msgs)-1].Results {
			got = append(got, r.CallID+": "+r.Content)
		}
	}
	want := []string{"n1: " + refusal, "n2: found x", "n3: " + refusal}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results sent back (-want +got):\n%s", diff)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
