package intent_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/turn"
)

// TestDocumentBudgetHistoryFamilies: a request for the agent's documents,
// this conversation's files, the budget or earlier conversations opens
// its family and declares its tools, named by tool (check_budget and
// search_conversations open as soon as a catalog holds them); chat about
// the same words opens nothing.
func TestDocumentBudgetHistoryFamilies(t *testing.T) {
	c := registry.New()
	c.Register(
		rawTool("calculate", "", true),
		rawTool("search_knowledge", "knowledge", false),
		rawTool("read_document", "documents", false),
		rawTool("search_attachments", "documents", false),
		rawTool("check_budget", "budget", false),
		rawTool("search_conversations", "history", false),
	)
	var allow []string
	for _, tl := range c.Tools() {
		allow = append(allow, tl.Name())
	}
	selected := c.Select(turn.Facts{Model: turn.Model{Name: "m", Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: allow}})
	d := detector(t)
	for _, tc := range []struct {
		msg     string
		targets []string
		tools   []string
	}{
		{"look in the handbook for how expenses work", []string{intent.Knowledge}, []string{"search_knowledge", "read_document"}},
		{"what's in the file I sent you?", []string{intent.Attachments}, []string{"read_document", "search_attachments"}},
		{"how much have I spent this month?", []string{intent.Budget}, []string{"check_budget"}},
		{"what did I say last week about the trip? what did i say about the hotel", []string{intent.History}, []string{"search_conversations"}},
		{"sổ tay nhân viên nói gì về nghỉ thai sản?", []string{intent.Knowledge}, []string{"search_knowledge", "read_document"}},
		// The workspace opens too (its pack reads 文件 as a file of it).
		{"我发给你的文件里写了什么？", []string{intent.Files, intent.Attachments}, []string{"read_document", "search_attachments"}},
		{"Wie viel hab ich diesen Monat schon ausgegeben?", []string{intent.Budget}, []string{"check_budget"}},
		{"前回の会話で教えてくれたレシピ、もう一回見せて", []string{intent.History}, []string{"search_conversations"}},
		{"my budget for the wedding is way too tight", nil, nil},
		{"we talked for hours, it was such a nice evening", nil, nil},
	} {
		got := d.Detect(intent.Input{Text: tc.msg}).Targets
		if diff := cmp.Diff(tc.targets, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q: targets (-want +got):\n%s", tc.msg, diff)
		}
		gated := intent.Gate(selected, c, got, intent.GateOptions{}).Names()
		if want := append([]string{"calculate"}, tc.tools...); !slices.Equal(gated, want) {
			t.Errorf("%q: declared %v, want %v", tc.msg, gated, want)
		}
	}
	for _, target := range []string{intent.Knowledge, intent.Attachments, intent.Budget, intent.History} {
		if len(intent.TargetTools(target)) == 0 {
			t.Errorf("%s opens no tool", target)
		}
	}
}

// TestEveryPackReachesTheNewFamilies: each of the eleven packs has
// phrases for knowledge, attachments, budget and history.
func TestEveryPackReachesTheNewFamilies(t *testing.T) {
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packs {
		for _, target := range []string{intent.Knowledge, intent.Attachments, intent.Budget, intent.History} {
			if len(p.Triggers[target]) == 0 && !slices.ContainsFunc(p.Combos, func(c intent.Combo) bool { return c.Target == target }) {
				t.Errorf("%s.yaml has no trigger or combo for %s", p.Lang, target)
			}
		}
	}
}
