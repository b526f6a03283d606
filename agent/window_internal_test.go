package agent

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

// genHistory is a random well-formed history: earlier turns, then the
// running turn (its context message, message, steps and maybe an answer
// to a question), with every call answered by the tool message after it.
func genHistory(r *rand.Rand) history {
	var h history
	n := 0
	text := func(tag string) string { n++; return fmt.Sprintf("%s#%d %s", tag, n, strings.Repeat("x", r.IntN(600))) }
	call := 0
	steps := func(n int) {
		for range n {
			k := 1 + r.IntN(3)
			a := llm.Message{Role: llm.Assistant, Text: text("a")}
			res := llm.Message{Role: llm.Tool}
			for range k {
				call++
				id := fmt.Sprintf("c%d", call)
				a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: id, Name: "lookup", Args: []byte(`{"q":"` + text("") + `"}`)})
				res.Results = append(res.Results, llm.ToolResult{CallID: id, Name: "lookup", Content: text("r")})
			}
			h.msgs = append(h.msgs, a, res)
		}
	}
	for i := range r.IntN(6) {
		h.msgs = append(h.msgs, llm.Message{Role: llm.User, Text: text(fmt.Sprintf("earlier %d ", i))})
		steps(r.IntN(3))
		if r.IntN(2) == 0 {
			h.msgs = append(h.msgs, llm.Message{Role: llm.Assistant, Text: text("answer")})
		}
	}
	h.turnStart = len(h.msgs)
	h.msgs = append(h.msgs, llm.Message{Role: llm.User, Text: text("context ")}, llm.Message{Role: llm.User, Text: text("message ")})
	steps(r.IntN(4))
	if r.IntN(3) == 0 {
		h.msgs = append(h.msgs, llm.Message{Role: llm.User, Text: text("answer to the question ")})
		steps(r.IntN(3))
	}
	for i := range h.turnStart {
		h.seqs = append(h.seqs, int64(10+i))
	}
	h.trimmed = r.IntN(2) * r.IntN(5)
	return h
}

// checkFit checks fit's contract on one history and budget; it returns
// the cut, for the caller's further checks.
func checkFit(t *testing.T, h history, fixed, budget, prev int) ([]llm.Message, Cut, int) {
	t.Helper()
	out, c, from := h.fit(fixed, budget, prev)
	// Calls and results are never split.
	for i, m := range out {
		if m.Role == llm.Assistant && len(m.ToolCalls) > 0 {
			if i+1 >= len(out) || out[i+1].Role != llm.Tool || len(out[i+1].Results) != len(m.ToolCalls) {
				t.Fatalf("call at %d sent without its results", i)
			}
			for j, c := range m.ToolCalls {
				if out[i+1].Results[j].CallID != c.ID {
					t.Fatalf("call %s answered by %s", c.ID, out[i+1].Results[j].CallID)
				}
			}
		}
		if m.Role == llm.Tool && (i == 0 || out[i-1].Role != llm.Assistant || len(out[i-1].ToolCalls) == 0) {
			t.Fatalf("results at %d sent without their calls", i)
		}
	}
	// Input order is kept; only the marker is new, once.
	j, markers := 0, 0
	for _, m := range out {
		if m.Role == llm.User && m.Text == c.Marker {
			markers++
			continue
		}
		for j < len(h.msgs) && !sameMessage(h.msgs[j], m) {
			j++
		}
		if j == len(h.msgs) {
			t.Fatalf("sent a message out of order or not in the history: %.40q", m.Text)
		}
		j++
	}
	if (c.Dropped > 0) != (markers == 1) || markers > 1 {
		t.Fatalf("dropped %d with %d markers", c.Dropped, markers)
	}
	if c.Dropped == 0 && len(out) != len(h.msgs) {
		t.Fatalf("sent %d of %d messages and says nothing was dropped", len(out), len(h.msgs))
	}
	// The running turn's user messages are all sent.
	for i := h.turnStart; i < len(h.msgs); i++ {
		if h.msgs[i].Role == llm.User && !containsText(out, h.msgs[i].Text) {
			t.Fatalf("the turn's user message %d was cut", i)
		}
	}
	// The estimate is the sent request's, and it fits whenever the part no
	// cut may touch fits.
	tokens := fixed
	for _, m := range out {
		tokens += messageTokens(m)
	}
	if tokens != c.Tokens {
		t.Fatalf("cut says %d tokens, the request estimates %d", c.Tokens, tokens)
	}
	if fixed+protectedTokens(h)+markerTokens <= budget && c.Tokens > budget {
		t.Fatalf("request of %d tokens over a budget of %d that the turn's own messages fit", c.Tokens, budget)
	}
	if prev == 0 && h.trimmed == 0 && fixed+totalTokens(h) <= budget && c.Dropped != 0 {
		t.Fatalf("cut a history that fits")
	}
	// Oldest first: no cuttable unit before from is kept.
	if from < prev {
		t.Fatalf("cut moved back from %d to %d", prev, from)
	}
	for _, u := range h.units() {
		if !u.keep && u.start < from && containsMessage(out, h.msgs[u.start]) {
			t.Fatalf("kept unit at %d before the cut at %d", u.start, from)
		}
	}
	return out, c, from
}

func sameMessage(a, b llm.Message) bool {
	return a.Role == b.Role && a.Text == b.Text && len(a.ToolCalls) == len(b.ToolCalls) && len(a.Results) == len(b.Results)
}

func containsText(ms []llm.Message, text string) bool {
	for _, m := range ms {
		if m.Text == text {
			return true
		}
	}
	return false
}

func containsMessage(ms []llm.Message, x llm.Message) bool {
	for _, m := range ms {
		if sameMessage(m, x) {
			return true
		}
	}
	return false
}

func protectedTokens(h history) int {
	n := 0
	for _, u := range h.units() {
		if u.keep {
			n += u.tokens
		}
	}
	return n
}

func totalTokens(h history) int {
	n := 0
	for _, m := range h.msgs {
		n += messageTokens(m)
	}
	return n
}

// FuzzFit: on any well-formed history and budget, fit never splits a call
// from its result, never cuts the running turn's user messages, keeps
// order, cuts oldest first and never back, and fits whenever the turn's
// own messages fit; a cut repeated on the grown history of the next call
// keeps its ground.
func FuzzFit(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1000} {
		f.Add(s, uint16(3000))
	}
	f.Fuzz(func(t *testing.T, seed uint64, budget uint16) {
		fuzzFit(t, seed, int(budget))
	})
}

func fuzzFit(t *testing.T, seed uint64, budget int) {
	r := rand.New(rand.NewPCG(seed, seed>>1))
	h := genHistory(r)
	fixed := r.IntN(800)
	_, _, from := checkFit(t, h, fixed, budget, 0)
	// The next call of the turn: one more step.
	h.msgs = append(h.msgs,
		llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "next", Name: "lookup", Args: []byte(`{}`)}}},
		llm.Message{Role: llm.Tool, Results: []llm.ToolResult{{CallID: "next", Name: "lookup", Content: strings.Repeat("y", r.IntN(2000))}}})
	checkFit(t, h, fixed, budget, from)
}

// TestFitProperties runs the fuzz property over many seeds and budgets.
func TestFitProperties(t *testing.T) {
	for seed := range uint64(3000) {
		fuzzFit(t, seed, 200+int(seed*37%6000))
	}
}

// TestFitKeepsHeadroom: a cut leaves an eighth of the budget free, so the
// next call of the turn, a little longer, keeps the same cut (and the
// provider's cached prefix).
func TestFitKeepsHeadroom(t *testing.T) {
	var h history
	for i := range 20 {
		h.msgs = append(h.msgs, llm.Message{Role: llm.User, Text: fmt.Sprintf("turn %d %s", i, strings.Repeat("x", 400))})
	}
	h.turnStart = len(h.msgs)
	h.msgs = append(h.msgs, llm.Message{Role: llm.User, Text: "ctx"}, llm.Message{Role: llm.User, Text: "now"})
	out, c, from := h.fit(100, 1000, 0)
	if c.Tokens > 1000-1000/8 || from == 0 {
		t.Fatalf("cut to %d tokens from %d; want at most 875", c.Tokens, from)
	}
	h.msgs = append(h.msgs, llm.Message{Role: llm.Assistant, Text: strings.Repeat("z", 200)})
	out2, _, from2 := h.fit(100, 1000, from)
	if from2 != from || !sameMessage(out[0], out2[0]) || !sameMessage(out[1], out2[1]) {
		t.Errorf("the next call moved the cut from %d to %d", from, from2)
	}
}

// TestMarkerText: the marker counts what is left out as the transcript
// stores it and says where read_transcript picks up.
func TestMarkerText(t *testing.T) {
	h := history{msgs: []llm.Message{
		{Role: llm.User, Text: strings.Repeat("old ", 200)},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "a"}, {ID: "2", Name: "b"}}},
		{Role: llm.Tool, Results: []llm.ToolResult{{CallID: "1", Content: strings.Repeat("r", 800)}, {CallID: "2", Content: "r"}}},
		{Role: llm.User, Text: "recent"},
		{Role: llm.User, Text: "ctx"},
		{Role: llm.User, Text: "now"},
	}, turnStart: 4, seqs: []int64{5, 6, 9, 11}, trimmed: 3}
	out, c, _ := h.fit(0, 200, 0)
	want := "[9 earlier messages of this conversation are not shown here, to fit the model's context window; read_transcript can read earlier turns (before=11).]"
	if c.Dropped != 9 || c.Marker != want || out[0].Text != want || out[1].Text != "recent" {
		t.Errorf("cut %+v, first sent %q, %q", c, out[0].Text, out[1].Text)
	}
}

// TestMarkerAllowance: the longest marker fits the allowance fit makes
// for it.
func TestMarkerAllowance(t *testing.T) {
	m := llm.Message{Role: llm.User, Text: markerText(1<<62, 1<<62, true)}
	if n := messageTokens(m); n > markerTokens {
		t.Errorf("marker of %d tokens over its allowance of %d", n, markerTokens)
	}
}

// BenchmarkFit: fitting a 200-message history (100 call groups of 2 KB
// results) into a window it overflows, as every model call of a long
// conversation does; and one that fits, the common case.
func BenchmarkFit(b *testing.B) {
	var h history
	for i := range 100 {
		id := fmt.Sprintf("c%d", i)
		h.msgs = append(h.msgs,
			llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "lookup", Args: []byte(`{"q":"x"}`)}}},
			llm.Message{Role: llm.Tool, Results: []llm.ToolResult{{CallID: id, Name: "lookup", Content: strings.Repeat("r", 2000)}}})
	}
	h.turnStart = len(h.msgs)
	h.msgs = append(h.msgs, llm.Message{Role: llm.User, Text: "ctx"}, llm.Message{Role: llm.User, Text: "now"})
	for _, bc := range []struct {
		name   string
		budget int
	}{{"cut", 20_000}, {"fits", 200_000}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.fit(3000, bc.budget, 0)
			}
		})
	}
}

// TestResumedTurnKeepsItsRequest: a resumed turn with more stored
// messages than MaxHistory still sends its own context message and
// request; only earlier turns are trimmed to MaxHistory.
func TestResumedTurnKeepsItsRequest(t *testing.T) {
	var msgs []store.Message
	add := func(turn, role, content string) {
		msgs = append(msgs, store.Message{Seq: int64(len(msgs) + 1), TurnID: turn, Role: role, Content: content})
	}
	for i := range 150 {
		add("t0", "user", fmt.Sprintf("earlier %d", i))
		add("t0", "assistant", "ok")
	}
	add("t1", roleContext, "the context")
	add("t1", "user", "the request")
	for range 250 {
		add("t1", "assistant", "working")
	}
	add("t1", "user", "the answer")
	h := buildHistory(msgs, 200, "t1")
	cur := h.msgs[h.turnStart:]
	if len(cur) < 2 || !strings.Contains(cur[0].Text+cur[1].Text, "the request") {
		t.Fatalf("the resumed turn's first messages %+v, want its context and request", cur[:min(2, len(cur))])
	}
	if got := len(cur); got != 253 {
		t.Errorf("the turn's messages sent: %d, want all 253", got)
	}
	if earlier := h.turnStart; earlier > 200 || earlier == 0 {
		t.Errorf("earlier messages sent: %d, want 1–200", earlier)
	}
}
