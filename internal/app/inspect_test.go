package app_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store/sqlite"
)

// inspection is the part of GET /api/conversations/{id}/inspect the tests
// read.
type inspection struct {
	TurnID   string                          `json:"turn_id"`
	Tools    []struct{ Name string }         `json:"tools"`
	Origins  []httpapi.ToolOrigin            `json:"origins"`
	Excluded []struct{ Name, Reason string } `json:"excluded"`
}

// declares reports whether the inspected request declares name.
func (in inspection) declares(name string) bool {
	for _, d := range in.Tools {
		if d.Name == name {
			return true
		}
	}
	return false
}

// reason returns why the inspected toolset left name out, and whether it
// did.
func (in inspection) reason(name string) (string, bool) {
	for _, e := range in.Excluded {
		if e.Name == name {
			return e.Reason, true
		}
	}
	return "", false
}

// inspect reads the inspector of a past turn (turnID set) or of a draft.
func (a *apiClient) inspect(conv, turnID string) inspection {
	a.t.Helper()
	q := url.Values{"message": {"hi"}}
	if turnID != "" {
		q = url.Values{"turn": {turnID}}
	}
	var in inspection
	code, body := a.do(http.MethodGet, "/api/conversations/"+conv+"/inspect?"+q.Encode(), nil)
	if code != http.StatusOK || json.Unmarshal(body, &in) != nil {
		a.t.Fatalf("inspect %s: %d %s", q.Encode(), code, body)
	}
	return in
}

// TestInspectorKeepsPastReasons runs a turn of an agent whose allowlist
// lacks fetch_url through a real quiver serve, then allows it: the past
// turn's inspector still gives the reason of its time, exactly, while a
// draft declares fetch_url. A turn stored before turns recorded their
// exclusions falls back to the restored toolset's reason with today's.
func TestInspectorKeepsPastReasons(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"hello"}})
	data := t.TempDir()
	s := startServe(t, data, model)
	a := signIn(t, s)
	putAgent := func(tools string) {
		t.Helper()
		def := "name: reader\nmodel: openai:gpt-test\nprompt: Read.\ntools: [" + tools + "]\n"
		if code, body := a.do(http.MethodPut, "/api/agents/reader", map[string]string{"definition": def}); code/100 != 2 {
			t.Fatalf("put agent: %d %s", code, body)
		}
	}
	putAgent("calculate")
	var conv struct{ ID string }
	if code, body := a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": "reader"}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	if code, body := a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "hi"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send: %d %s", code, body)
	}
	turnID := a.firstTurnID(conv.ID)

	const atTheTime = "not in the agent's allowlist"
	check := func(when string, in inspection, wantReason string) {
		t.Helper()
		if got, ok := in.reason("fetch_url"); !ok || got != wantReason {
			t.Errorf("%s: fetch_url left out with %q (%v), want %q", when, got, ok, wantReason)
		}
		if in.declares("fetch_url") || !in.declares("calculate") {
			t.Errorf("%s: declared %+v, want calculate and not fetch_url", when, in.Tools)
		}
	}
	check("past turn before the change", a.inspect(conv.ID, turnID), atTheTime)

	putAgent("calculate, fetch_url")
	if draft := a.inspect(conv.ID, ""); !draft.declares("fetch_url") {
		t.Errorf("draft after allowing fetch_url: declared %+v, excluded %+v", draft.Tools, draft.Excluded)
	}
	past := a.inspect(conv.ID, turnID)
	if past.TurnID != turnID {
		t.Errorf("inspected turn %q, want %q", past.TurnID, turnID)
	}
	check("past turn after the change", past, atTheTime)

	// The same turn as a build before this change stored it: no reasons.
	st, err := sqlite.Open(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := st.GetTurn(t.Context(), "default", turnID)
	if err != nil || rec.Excluded == nil {
		t.Fatalf("stored turn: %+v, %v; want its exclusions recorded", rec, err)
	}
	rec.Excluded = nil
	if err := st.PutTurn(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	check("past turn without recorded reasons", a.inspect(conv.ID, turnID), "not in the toolset this turn started with")
}

// TestInspectorDeliberateReasons: through a real quiver serve with the
// organisation's Deliberate Tool Mode on, the inspector says why each tool
// is declared — the always-on helpers kept, web_search opened by search —
// and, once the organisation gates the always-on helpers too, declares
// none for a chat message and names that rule for each.
func TestInspectorDeliberateReasons(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Cats it is."}})
	s := startServe(t, t.TempDir(), model)
	a := signIn(t, s)
	def := "name: reader\nmodel: openai:gpt-test\nprompt: Read.\ntools: [web_search]\n"
	if code, body := a.do(http.MethodPut, "/api/agents/reader", map[string]string{"definition": def}); code/100 != 2 {
		t.Fatalf("put agent: %d %s", code, body)
	}
	var conv struct{ ID string }
	if code, body := a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": "reader"}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	type why struct{ Name, Reason string }
	inspect := func(message string) ([]why, inspection) {
		t.Helper()
		var in struct {
			inspection
			Declared []why `json:"declared"`
		}
		code, body := a.do(http.MethodGet, "/api/conversations/"+conv.ID+"/inspect?"+url.Values{"message": {message}}.Encode(), nil)
		if code != http.StatusOK || json.Unmarshal(body, &in) != nil {
			t.Fatalf("inspect %q: %d %s", message, code, body)
		}
		return in.Declared, in.inspection
	}
	helpers := []string{"calculate", "read_tool_result", "read_transcript", "ask_clarifying_question", "suggest_next_actions"}
	kept := append(slices.Clone(helpers), intent.RecoveryTool)
	put := func(body map[string]any) {
		t.Helper()
		if code, b := a.do(http.MethodPut, "/api/deliberate", body); code != http.StatusOK {
			t.Fatalf("put deliberate: %d %s", code, b)
		}
	}

	if declared, _ := inspect("hi"); len(declared) != 0 {
		t.Errorf("mode off: why declared %+v, want none given", declared)
	}
	put(map[string]any{"enabled": true, "history_turns": -1})
	var want []why
	for _, name := range kept {
		want = append(want, why{name, "always-on: kept by deliberate tool mode"})
	}
	if declared, _ := inspect("hi"); !slices.Equal(declared, want) {
		t.Errorf("mode on, hi: why declared %+v, want %+v", declared, want)
	}
	want = append(want, why{"web_search", `opened by: search (phrase "search the web", pack)`})
	if declared, _ := inspect("search the web for cats"); !slices.Equal(declared, want) {
		t.Errorf("mode on, a search: why declared %+v, want %+v", declared, want)
	}
	// A turn run under the mode records its reasons: its inspector shows
	// them later, whatever the mode decides for new messages by then. (In
	// a conversation of its own: its message would open search in this
	// one's later turns.)
	ran := a.newConversation("reader")
	if code, body := a.do(http.MethodPost, "/api/conversations/"+ran+"/messages", map[string]string{"message": "search the web for cats"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send: %d %s", code, body)
	}
	ranTurn := a.firstTurnID(ran)
	past := func() []why {
		t.Helper()
		var in struct {
			Declared []why `json:"declared"`
		}
		code, body := a.do(http.MethodGet, "/api/conversations/"+ran+"/inspect?turn="+ranTurn, nil)
		if code != http.StatusOK || json.Unmarshal(body, &in) != nil {
			t.Fatalf("inspect the past turn: %d %s", code, body)
		}
		return in.Declared
	}
	if got := past(); !slices.Equal(got, want) {
		t.Errorf("the past turn: why declared %+v, want %+v", got, want)
	}
	defer func() {
		if got := past(); !slices.Equal(got, want) {
			t.Errorf("the past turn, after the organisation gated the helpers: why declared %+v, want %+v", got, want)
		}
	}()

	put(map[string]any{"enabled": true, "history_turns": -1, "gate_always_on": true})
	declared, in := inspect("hi")
	if len(declared) != 1 || len(in.Tools) != 1 || in.Tools[0].Name != intent.RecoveryTool {
		t.Errorf("gating the helpers, hi: declared %+v, why %+v; want the recovery tool alone", in.Tools, declared)
	}
	for _, name := range helpers {
		if r, _ := in.reason(name); !strings.HasPrefix(r, "deliberate tool mode, always-on tools gated by the organisation: ") {
			t.Errorf("gating the helpers: %s left out with %q, want the opt-in named", name, r)
		}
	}
}

// TestInspectorPastGatedTurnKeepsItsPrompt: a turn whose tools Deliberate
// Tool Mode hid entirely (the organisation gates the helpers too) was sent
// "you can use tools"; inspecting it later shows the system prompt the
// model received, not one rebuilt from its empty toolset.
func TestInspectorPastGatedTurnKeepsItsPrompt(t *testing.T) {
	model := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Hello."}})
	s := startServe(t, t.TempDir(), model)
	a := signIn(t, s)
	def := "name: reader\nmodel: openai:gpt-test\ntools: [web_search]\n"
	if code, body := a.do(http.MethodPut, "/api/agents/reader", map[string]string{"definition": def}); code/100 != 2 {
		t.Fatalf("put agent: %d %s", code, body)
	}
	if code, b := a.do(http.MethodPut, "/api/deliberate", map[string]any{"enabled": true, "history_turns": -1, "gate_always_on": true}); code != http.StatusOK {
		t.Fatalf("put deliberate: %d %s", code, b)
	}
	conv := a.newConversation("reader")
	if code, body := a.do(http.MethodPost, "/api/conversations/"+conv+"/messages", map[string]string{"message": "hi"}); code != http.StatusOK || !strings.Contains(string(body), `"done"`) {
		t.Fatalf("send: %d %s", code, body)
	}
	seen := model.Seen()
	if len(seen) != 1 || len(seen[0].Req.Tools) != 1 || seen[0].Req.Tools[0].Name != intent.RecoveryTool || !strings.Contains(seen[0].Req.System, "You can use tools") {
		t.Fatalf("the model got %d requests; want one with the recovery tool alone and 'You can use tools'", len(seen))
	}
	var in struct {
		System string `json:"system"`
	}
	code, body := a.do(http.MethodGet, "/api/conversations/"+conv+"/inspect?turn="+a.firstTurnID(conv), nil)
	if code != http.StatusOK || json.Unmarshal(body, &in) != nil {
		t.Fatalf("inspect: %d %s", code, body)
	}
	if in.System != seen[0].Req.System {
		t.Errorf("the past turn's system prompt:\n%s\nwant what the model received:\n%s", in.System, seen[0].Req.System)
	}
}
