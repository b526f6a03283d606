package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin/history"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// ana is the turn's scope: ana in o1, in conversation "now".
var ana = tool.Scope{OrgID: "o1", UserID: "ana", ConversationID: "now", TurnID: "t1"}

// kit is search_conversations over one SQLite store.
type kit struct {
	st store.Store
	tl *tool.Tool
	n  int
}

func newKit(t *testing.T) *kit {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &kit{st: st, tl: history.Tool(st)}
}

// conversation stores a conversation of user in org with the messages
// given as role, text pairs, the last one newest.
func (k *kit) conversation(t *testing.T, org, user, id, title string, msgs ...string) {
	t.Helper()
	ctx := context.Background()
	k.n++
	when := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(k.n) * time.Hour)
	if err := k.st.PutConversation(ctx, store.Conversation{ID: id, OrgID: org, UserID: user, Agent: "helper", Title: title, CreatedAt: when, UpdatedAt: when}); err != nil {
		t.Fatal(err)
	}
	var ms []store.Message
	for i := 0; i+1 < len(msgs); i += 2 {
		ms = append(ms, store.Message{ConversationID: id, TurnID: "t", Role: msgs[i], Content: msgs[i+1], CreatedAt: when.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := k.st.AppendMessages(ctx, org, ms); err != nil {
		t.Fatal(err)
	}
}

// call runs the tool; the text is the error's for a refused call, and an
// infrastructure error fails the test.
func (k *kit) call(t *testing.T, s tool.Scope, args any) (string, bool) {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := k.tl.Run(context.Background(), s, b)
	switch {
	case err != nil && tool.IsInfra(err):
		t.Fatalf("infrastructure error: %v", err)
	case err != nil:
		return err.Error(), true
	}
	return res.Content, false
}

func (k *kit) must(t *testing.T, s tool.Scope, args any) string {
	t.Helper()
	out, failed := k.call(t, s, args)
	if failed {
		t.Fatalf("search_conversations(%v) refused: %s", args, out)
	}
	return out
}

func TestDeclaredOnlyUnderItsSwitch(t *testing.T) {
	c := registry.New()
	c.Register(history.Tool(nil))
	tests := []struct {
		name     string
		switches map[string]bool
		want     []registry.Exclusion
	}{
		{"on", map[string]bool{"conversation_search": true}, nil},
		{"unset", nil, []registry.Exclusion{{Name: "search_conversations", Reason: "conversation_search switch off"}}},
		{"off", map[string]bool{"conversation_search": false}, []registry.Exclusion{{Name: "search_conversations", Reason: "conversation_search switch off"}}},
		{"family off", map[string]bool{"conversation_search": true, "history": false}, []registry.Exclusion{{Name: "search_conversations", Reason: "history switch off"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}},
				Agent: turn.Agent{Allow: []string{"history"}, Switches: tc.switches}}
			ts := c.Select(f)
			if d := cmp.Diff(tc.want, ts.Excluded()); d != "" {
				t.Errorf("excluded (-want +got):\n%s", d)
			}
			if declared := ts.Len() == 1; declared != (tc.want == nil) {
				t.Errorf("declared %v, want %v", declared, tc.want == nil)
			}
		})
	}
	f := turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}},
		Agent: turn.Agent{Switches: map[string]bool{"conversation_search": true}}}
	if ts := c.Select(f); ts.Len() != 0 {
		t.Error("the switch declared the tool without the allowlist naming it")
	}
}

func TestSearchesOnlyThePersonsOwnEarlierWords(t *testing.T) {
	k := newKit(t)
	k.conversation(t, "o1", "ana", "trip", "Trip to Đà Nẵng",
		"user", "Tôi muốn đặt khách sạn ở ĐÀ NẴNG gần biển",
		"assistant", "Kumquat hotel is free; đà nẵng is lovely",
		"tool_call", `{"query":"kumquat"}`, "tool", "kumquat results",
		"context", "kumquat context")
	k.conversation(t, "o1", "ana", "now", "This one", "user", "đà nẵng again, today")
	k.conversation(t, "o1", "binh", "binh-trip", "Binh's", "user", "đà nẵng for binh")
	k.conversation(t, "o2", "ana", "other-org", "Elsewhere", "user", "đà nẵng in another organisation")

	out := k.must(t, ana, map[string]any{"query": "Đà Nẵng"})
	if strings.Contains(out, "conversation trip") || strings.Contains(out, "trip)") {
		t.Errorf("the answer shows a conversation id:\n%s", out)
	}
	for _, want := range []string{`"Trip to Đà Nẵng" (2026-03-01)`, "Tôi muốn đặt khách sạn ở ĐÀ NẴNG gần biển"} {
		if !strings.Contains(out, want) {
			t.Errorf("answer lacks %q:\n%s", want, out)
		}
	}
	for _, leak := range []string{"now", "binh", "another organisation", "lovely"} {
		if strings.Contains(out, leak) {
			t.Errorf("answer holds %q (another person's, organisation's or conversation's, or the assistant's):\n%s", leak, out)
		}
	}
	if out := k.must(t, ana, map[string]any{"query": "kumquat"}); !strings.HasPrefix(out, "No earlier conversation") {
		t.Errorf("assistant, tool and context text matched:\n%s", out)
	}
	// The model's arguments cannot widen the scope: there is no field
	// for it, and an unknown one is refused before the handler runs.
	if out, failed := k.call(t, ana, map[string]any{"query": "đà nẵng", "user_id": "binh"}); !failed {
		t.Errorf("an argument naming another person was accepted:\n%s", out)
	}
	if out, failed := k.call(t, tool.Scope{OrgID: "o1", ConversationID: "now"}, map[string]any{"query": "đà nẵng"}); !failed || strings.Contains(out, "Trip") {
		t.Errorf("a call without a person = %q, want refused", out)
	}
}

func TestBounds(t *testing.T) {
	k := newKit(t)
	long := strings.Repeat("x", 5000)
	title := strings.Repeat("T", store.MaxTitleRunes)
	for i := range 12 {
		k.conversation(t, "o1", "ana", fmt.Sprintf("conv-%02d", i), title,
			"user", long+" needle "+strings.Repeat("y", 5000))
	}
	count := func(out string) int { return len(regexp.MustCompile(`(?m)^\[\d+\] `).FindAllString(out, -1)) }
	tests := []struct {
		name   string
		args   map[string]any
		hits   int
		refuse string
	}{
		{"default limit", map[string]any{"query": "needle"}, history.DefaultLimit, ""},
		{"limit 10", map[string]any{"query": "needle", "limit": 10}, 10, ""},
		{"limit 11 refused", map[string]any{"query": "needle", "limit": 11}, 0, "limit must be between 1 and 10, got 11"},
		{"negative limit refused", map[string]any{"query": "needle", "limit": -1}, 0, "limit must be between 1 and 10"},
		{"200 characters", map[string]any{"query": "needle " + strings.Repeat("ố", 193)}, 0, ""},
		{"201 characters refused", map[string]any{"query": "needle " + strings.Repeat("ố", 194)}, 0, "query is 201 characters; the limit is 200"},
		{"9 words refused", map[string]any{"query": "a b c d e f g h i"}, 0, "query has 9 words; the limit is 8"},
		{"empty refused", map[string]any{"query": "   "}, 0, "query is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, failed := k.call(t, ana, tc.args)
			if tc.refuse != "" {
				if !failed || !strings.Contains(out, tc.refuse) || strings.Contains(out, "\n") {
					t.Errorf("= %q, want one line refusing with %q", out, tc.refuse)
				}
				return
			}
			if failed {
				t.Fatalf("refused: %s", out)
			}
			if got := count(out); got != tc.hits {
				t.Errorf("%d hits, want %d:\n%s", got, tc.hits, out)
			}
		})
	}
	out := k.must(t, ana, map[string]any{"query": "needle", "limit": history.MaxLimit})
	if n := utf8.RuneCountInString(out); n > history.MaxOutputRunes {
		t.Errorf("answer is %d characters, over %d", n, history.MaxOutputRunes)
	}
	for _, line := range strings.Split(out, "\n")[1:] {
		if strings.HasPrefix(line, "    ") {
			if n := utf8.RuneCountInString(strings.TrimPrefix(line, "    ")); n > history.SnippetRunes || !strings.Contains(line, "needle") {
				t.Errorf("snippet of %d characters (limit %d), with the match: %v", n, history.SnippetRunes, strings.Contains(line, "needle"))
			}
		}
	}
}

// TestOpenedWithMemory: under Deliberate Tool Mode its own history
// family and the memory family ("what did I tell you about…") open
// search_conversations.
func TestOpenedWithMemory(t *testing.T) {
	if got := intent.TargetsOf(history.Tool(nil)); !cmp.Equal(got, []string{intent.Memory, intent.History}) {
		t.Errorf("TargetsOf = %v, want [memory history]", got)
	}
}

func TestNoStore(t *testing.T) {
	_, err := history.Tool(nil).Run(context.Background(), ana, json.RawMessage(`{"query":"x"}`))
	if !tool.IsInfra(err) || !errors.Is(err, store.ErrNoStore) {
		t.Errorf("without a store: %v, want an infrastructure error wrapping ErrNoStore", err)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("a ", 200) // 400 runes
	tests := []struct {
		name, text string
		words      []string
		n          int
		want       string
	}{
		{"short whole", "Hello\n  there", []string{"there"}, 20, "Hello there"},
		{"match at start", "needle " + long, []string{"needle"}, 12, "needle a a…"},
		{"match in the middle", long + "NEEDLE" + long, []string{"needle"}, 10, "…a NEEDLE…"},
		{"earliest of the words", long + "two one", []string{"one", "two"}, 9, "… two on…"},
		{"match at the end", long + "Đà", []string{"đà"}, 10, "…a a a Đà"},
		{"decomposed text shown composed", "Hue\u0302\u0301 " + long, []string{"huế"}, 8, "Huế a …"},
		{"no match shows the start", long, []string{"zzz"}, 6, "a a …"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := history.Snippet(tc.text, tc.words, tc.n)
			if got != tc.want {
				t.Errorf("Snippet = %q, want %q", got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > tc.n {
				t.Errorf("%d runes, over %d", n, tc.n)
			}
		})
	}
}
