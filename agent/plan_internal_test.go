package agent

import (
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

func llmCall(name string) llm.ToolCall { return llm.ToolCall{ID: "c", Name: name, Args: []byte("{}")} }

// TestCallsRanIsStructural: a resumed turn's count of the calls it ran
// reads the refusal mark on each stored result, not its text: a tool's
// own output that happens to begin like a refusal counts as run, and a
// refusal counts as not run whatever it says; other turns' results and
// other messages do not count.
func TestCallsRanIsStructural(t *testing.T) {
	msgs := []store.Message{
		{TurnID: "t1", Role: "tool", Content: "Not run: a tool may answer this"},
		{TurnID: "t1", Role: "tool", Content: "found it"},
		{TurnID: "t1", Role: "tool", Content: "refused in other words", Refused: true, IsError: true},
		{TurnID: "t1", Role: "tool_call", Content: "{}"},
		{TurnID: "t0", Role: "tool", Content: "an earlier turn's"},
	}
	if got := callsRan(msgs, "t1"); got != 2 {
		t.Errorf("callsRan = %d, want 2", got)
	}
}

// TestPlanKeepsTheFirstCall: whatever a reply's first call is refused
// for, it is kept (so the provider's signature on it travels on), and of
// each reason only the first call is kept.
func TestPlanKeepsTheFirstCall(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ran, perStep int
		first        string
		want         refusal
	}{
		{"nameless", 0, 2, "", refusedNameless},
		{"turn used up", 5, 2, "lookup", refusedTurn},
		{"runs", 0, 2, "lookup", admitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &stepPlan{perStep: tc.perStep, perTurn: 5, left: 5 - tc.ran}
			if !p.add(llmCall(tc.first)) {
				t.Fatal("the first call was left out")
			}
			for range 10 {
				p.add(llmCall(tc.first))
			}
			if p.kept[0].why != tc.want {
				t.Errorf("first call kept as %d, want %d", p.kept[0].why, tc.want)
			}
			seen := map[refusal]int{}
			for _, k := range p.kept {
				seen[k.why]++
			}
			for why, n := range seen {
				if why != admitted && n != 1 {
					t.Errorf("%d calls kept refused for %d, want 1", n, why)
				}
			}
			if p.asked != 11 || p.leftOut() != 11-len(p.kept) {
				t.Errorf("asked %d, left out %d, kept %d", p.asked, p.leftOut(), len(p.kept))
			}
		})
	}
}
