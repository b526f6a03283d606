package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

func toolNames(req llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestChatDeliberateToolMode: with the mode on and the organisation gating
// the always-on helpers too, an ordinary message declares no tools; a
// calculation opens the calculator (and it stays open, first, for the rest
// of the conversation); a hidden tool called anyway gets the ordinary
// refusal; the use of an opened tool is thought-logged.
func TestChatDeliberateToolMode(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{Text: []string{"Hello!"}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "2+2"})}},
		llmtest.Reply{Text: []string{"4"}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c2", "list_files", map[string]string{})}},
		llmtest.Reply{Text: []string{"ok"}},
	)
	data := t.TempDir()
	chat := chatEnv(t, data, srv, "")
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on", "--always-on", "gate"); code != 0 || !strings.Contains(out, "always-on helpers: gate") {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	steps := []string{"hello there, how was your weekend?", "please calculate 2+2", "thanks, and what do you think of it?"}
	for _, msg := range steps {
		if code, _, stderr := chat("chat", "--agent", agentFile, "--conversation", "c-dtm", "--json", msg); code != 0 {
			t.Fatalf("%q: exit %d: %s", msg, code, stderr)
		}
	}
	seen := srv.Seen()
	if len(seen) != 5 {
		t.Fatalf("%d model calls, want 5", len(seen))
	}
	if got := toolNames(seen[0].Req); !slices.Equal(got, []string{intent.RecoveryTool}) {
		t.Errorf("ordinary chat declared %v, want the recovery tool alone", got)
	}
	if got := toolNames(seen[1].Req); !slices.Equal(got, []string{intent.RecoveryTool, "calculate"}) {
		t.Errorf("calculation declared %v, want [enable_tools calculate]", got)
	}
	if got := toolNames(seen[3].Req); !slices.Equal(got, []string{intent.RecoveryTool, "calculate"}) {
		t.Errorf("later turn declared %v, want the calculator kept open", got)
	}
	// The model called list_files, hidden this turn: the ordinary refusal.
	res := seen[4].Req.Messages[len(seen[4].Req.Messages)-1]
	if len(res.Results) != 1 || res.Results[0].Content != `Tool "list_files" is not available.` {
		t.Errorf("hidden tool call answered %+v", res.Results)
	}
	// The calculator's use is in the thought log, never sent to the model.
	code, out, _ := run(t, data, "transcript", "c-dtm", "--json")
	if code != 0 {
		t.Fatal(out)
	}
	var msgs []store.Message
	if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		var wrapped struct{ Messages []store.Message }
		if err2 := json.Unmarshal([]byte(out), &wrapped); err2 != nil {
			t.Fatalf("transcript JSON: %v", err)
		}
		msgs = wrapped.Messages
	}
	var thoughts []string
	for _, m := range msgs {
		if m.Role == store.RoleThought {
			thoughts = append(thoughts, m.Content)
		}
	}
	if len(thoughts) != 1 || !strings.Contains(thoughts[0], "calculate") || !strings.Contains(thoughts[0], "calculator") || !strings.Contains(thoughts[0], "Source: pack") {
		t.Errorf("thought log %q", thoughts)
	}
	for _, s := range seen {
		for _, m := range s.Req.Messages {
			if strings.Contains(m.Text, "deliberate tool mode opened") {
				t.Fatal("a thought-log entry reached the model")
			}
		}
	}
}

func TestIntentCommand(t *testing.T) {
	data := t.TempDir()
	code, out, stderr := run(t, data, "intent", "--json", "what's 15% of 80?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got intent.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Families, []string{"calculator"}) || !slices.Equal(got.Tools, modeKept) || len(got.Matches) == 0 {
		t.Errorf("got %+v, want the calculator opened and the always-on helpers declared", got)
	}
	if len(got.Declared) != len(got.Tools) || got.Declared[0] != (intent.Declared{Name: "calculate", Reason: intent.ReasonKept}) {
		t.Errorf("why declared %+v, want calculate kept first", got.Declared)
	}
	// A community that gates the always-on helpers: the calculator is
	// declared because the message opened it, and alone; --always-on
	// overrides the community's choice.
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "Calc", "on", "--always-on", "gate"); code != 0 {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	for _, args := range [][]string{
		{"triggers", "mode", "--server", "Calc", "off", "--always-on", "maybe"},
		{"intent", "--always-on", "maybe", "hi"},
	} {
		if code, _, stderr := run(t, data, args...); code != 2 || !strings.Contains(stderr, "--always-on") {
			t.Errorf("%v: exit %d, %q; want a usage error naming --always-on", args, code, stderr)
		}
	}
	intentJSON := func(args ...string) intent.Report {
		t.Helper()
		code, out, stderr := run(t, data, append([]string{"intent", "--json"}, args...)...)
		var o intent.Report
		if code != 0 || json.Unmarshal([]byte(out), &o) != nil {
			t.Fatalf("intent %v: exit %d: %s%s", args, code, out, stderr)
		}
		return o
	}
	gated := intentJSON("--server", "Calc", "what's 15% of 80?")
	if want := []intent.Declared{{Name: intent.RecoveryTool, Reason: intent.ReasonKept}, {Name: "calculate", Reason: `opened by: calculator (phrase "% of", pack)`}}; !cmp.Equal(gated.Declared, want) || !slices.Equal(gated.Tools, []string{intent.RecoveryTool, "calculate"}) {
		t.Errorf("community gating the helpers: tools %v, why %+v; want %+v", gated.Tools, gated.Declared, want)
	}
	if nothing := intentJSON("--server", "Calc", "hello"); !slices.Equal(nothing.Tools, []string{intent.RecoveryTool}) {
		t.Errorf("community gating the helpers, hello: tools %v, want the recovery tool alone", nothing.Tools)
	}
	if kept := intentJSON("--server", "Calc", "--always-on", "keep", "hello"); !slices.Equal(kept.Tools, modeKept) {
		t.Errorf("--always-on keep: tools %v, want %v", kept.Tools, modeKept)
	}
	// Custom triggers of a community apply with --server.
	if code, _, stderr := run(t, data, "triggers", "add", "--server", "Acme", "--target", "image", "PFP"); code != 0 {
		t.Fatalf("add: %s", stderr)
	}
	code, out, _ = run(t, data, "intent", "--server", "Acme", "--json", "new pfp pls")
	if code != 0 || !strings.Contains(out, `"image"`) || !strings.Contains(out, `"custom"`) {
		t.Errorf("custom trigger: %d %s", code, out)
	}
	code, out, _ = run(t, data, "intent", "--json", "new pfp pls")
	if code != 0 || strings.Contains(out, `"custom"`) {
		t.Errorf("custom trigger applied without --server: %s", out)
	}
	// Duplicates, bad phrases and unknown families are refused, nothing written.
	for _, args := range [][]string{
		{"triggers", "add", "--server", "Acme", "--target", "image", "pfp"},
		{"triggers", "add", "--server", "Acme", "--target", "image", "a(b"},
		{"triggers", "add", "--server", "Acme", "--target", "nope", "x"},
		{"triggers", "add", "--server", "Acme", "--target", "image", strings.Repeat("x", 41)},
	} {
		if code, _, stderr := run(t, data, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	code, out, _ = run(t, data, "triggers", "list", "--server", "Acme", "--json")
	if code != 0 || strings.Count(out, `"phrase"`) != 1 {
		t.Errorf("list: %s", out)
	}
	// --jsonl answers in order.
	code, out, stderr = runEnv(t, data, nil, `{"id":1,"message":"remind me at 5pm to stretch"}
{"id":2,"message":"good morning!"}
`, "intent", "--jsonl")
	if code != 0 {
		t.Fatalf("jsonl: %d %s", code, stderr)
	}
	if want := "{\"id\":1,\"families\":[\"reminder\"]}\n{\"id\":2,\"families\":[]}\n"; out != want {
		t.Errorf("jsonl out %q, want %q", out, want)
	}
	code, _, stderr = runEnv(t, data, nil, "{\"id\":1,\"msg\":\"x\"}\n", "intent", "--jsonl")
	if code != 2 || !strings.Contains(stderr, "line 1") {
		t.Errorf("bad jsonl: %d %q", code, stderr)
	}
}

// alwaysOnHelpers are the always-on helpers in registration order: what
// Deliberate Tool Mode declares for a message that asks for nothing.
var alwaysOnHelpers = []string{"calculate", "read_tool_result", "read_transcript", "ask_clarifying_question", "suggest_next_actions"}

// modeKept is what the mode declares whatever the message asks: the
// helpers, then its recovery tool.
var modeKept = append(slices.Clone(alwaysOnHelpers), intent.RecoveryTool)

// TestAgentDeliberateOverride turns the organisation's Deliberate Tool
// Mode on and gives one agent deliberate_tool_mode.enabled: false: that
// agent's ordinary chat declares every tool, while an agent without the
// override declares only the always-on helpers.
func TestAgentDeliberateOverride(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{Text: []string{"Hello!"}},
		llmtest.Reply{Text: []string{"Hello again!"}},
	)
	data := t.TempDir()
	chat := chatEnv(t, data, srv, "")
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on"); code != 0 {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	raw, err := os.ReadFile(agentFile)
	if err != nil {
		t.Fatal(err)
	}
	off := filepath.Join(t.TempDir(), "off.yaml")
	if err := os.WriteFile(off, append(raw, "\ndeliberate_tool_mode:\n  enabled: false\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, file := range []string{agentFile, off} {
		if code, _, stderr := chat("chat", "--agent", file, "--conversation", fmt.Sprintf("c-%d", i), "--json", "hello there, how was your weekend?"); code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
	}
	seen := srv.Seen()
	if len(seen) != 2 {
		t.Fatalf("%d model calls, want 2", len(seen))
	}
	if got := toolNames(seen[0].Req); !slices.Equal(got, modeKept) {
		t.Errorf("with the organisation's mode on, ordinary chat declared %v, want the always-on helpers and the recovery tool %v", got, modeKept)
	}
	if got := toolNames(seen[1].Req); !slices.Contains(got, "calculate") || !slices.Contains(got, "list_files") {
		t.Errorf("with the agent's override off, declared %v, want every tool", got)
	}
}

// TestChatDeliberateKeepsAlwaysOn: with the mode on and the organisation's
// default, every turn declares the always-on helpers first; a web search
// request adds the web tools after them, and they stay open, in the same
// order, on the next turn. The calculator's use is not thought-logged: the
// mode kept it, no message opened it.
func TestChatDeliberateKeepsAlwaysOn(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{Text: []string{"Hello!"}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "2+2"})}},
		llmtest.Reply{Text: []string{"4"}},
		llmtest.Reply{Text: []string{"Go 1.26."}},
		llmtest.Reply{Text: []string{"You're welcome."}},
	)
	data := t.TempDir()
	agent := filepath.Join(t.TempDir(), "researcher.yaml")
	writeFile(t, agent, "name: researcher\nmodel: openai:gpt-4.1-mini\ntools: [web_search, url_fetch, research]\n")
	chat := chatEnv(t, data, srv, "")
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on"); code != 0 || !strings.Contains(out, "always-on helpers: keep") {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	for _, msg := range []string{"hello there, how was your weekend?", "please calculate 2+2",
		"search the web for the latest Go release", "thanks!"} {
		if code, _, stderr := chat("chat", "--agent", agent, "--conversation", "c-keep", "--json", msg); code != 0 {
			t.Fatalf("%q: exit %d: %s", msg, code, stderr)
		}
	}
	seen := srv.Seen()
	if len(seen) != 5 {
		t.Fatalf("%d model calls, want 5", len(seen))
	}
	web := append(slices.Clone(modeKept), "web_search", "fetch_url", "research_web")
	for i, want := range [][]string{modeKept, modeKept, modeKept, web, web} {
		if got := toolNames(seen[i].Req); !slices.Equal(got, want) {
			t.Errorf("model call %d declared %v, want %v", i, got, want)
		}
	}
	code, out, _ := run(t, data, "transcript", "c-keep", "--json")
	if code != 0 {
		t.Fatal(out)
	}
	if strings.Contains(out, `"thought"`) {
		t.Errorf("a kept helper's use was thought-logged:\n%s", out)
	}
}

// TestTurnDeliberate: quiver turn --dtm declares exactly the always-on
// helpers for a message that asks for nothing, each kept by the mode; with
// --always-on gate none, each left out naming that rule; a web search
// request declares the helpers, then the web tools, each opened by search.
func TestTurnDeliberate(t *testing.T) {
	dir := t.TempDir()
	web := filepath.Join(dir, "researcher.yaml")
	writeFile(t, web, "name: researcher\ntools: [web_search, url_fetch, research]\n")
	turnJSON := func(args ...string) app.TurnOutput {
		t.Helper()
		code, out, stderr := run(t, dir, append([]string{"turn", "--json", "--dtm"}, args...)...)
		if code != 0 {
			t.Fatalf("turn %v: exit %d: %s", args, code, stderr)
		}
		var got app.TurnOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	names := func(o app.TurnOutput) []string {
		var out []string
		for _, d := range o.Tools {
			out = append(out, d.Name)
		}
		return out
	}
	reasons := func(o app.TurnOutput) map[string]string {
		m := map[string]string{}
		for _, e := range o.Excluded {
			m[e.Name] = e.Reason
		}
		return m
	}

	kept := turnJSON("--agent", agentFile, "hello")
	if got := names(kept); !slices.Equal(got, modeKept) {
		t.Errorf("hello declared %v, want %v", got, modeKept)
	}
	var wantKept []intent.Declared
	for _, name := range modeKept {
		wantKept = append(wantKept, intent.Declared{Name: name, Reason: "always-on: kept by deliberate tool mode"})
	}
	if d := cmp.Diff(wantKept, kept.Declared); d != "" {
		t.Errorf("hello: why declared (-want +got):\n%s", d)
	}
	if r := reasons(kept)["list_files"]; r != "deliberate tool mode: nothing in the conversation asks for files" {
		t.Errorf("hello: list_files left out with %q", r)
	}

	gated := turnJSON("--agent", agentFile, "--always-on", "gate", "hello")
	if got := names(gated); !slices.Equal(got, []string{intent.RecoveryTool}) || len(gated.Declared) != 1 {
		t.Errorf("hello, gating the helpers: declared %v, why %v; want the recovery tool alone", got, gated.Declared)
	}
	for _, name := range alwaysOnHelpers {
		if r := reasons(gated)[name]; !strings.HasPrefix(r, "deliberate tool mode, always-on tools gated by the organisation: ") {
			t.Errorf("hello, gating the helpers: %s left out with %q, want the opt-in named", name, r)
		}
	}

	search := turnJSON("--agent", web, "search the web for the latest Go release")
	wantWeb := append(slices.Clone(modeKept), "web_search", "fetch_url", "research_web")
	if got := names(search); !slices.Equal(got, wantWeb) {
		t.Errorf("web search declared %v, want %v", got, wantWeb)
	}
	opened := `opened by: search (phrase "search the web", pack)`
	for _, d := range search.Declared[len(modeKept):] {
		if d.Reason != opened {
			t.Errorf("web search: %s declared because %q, want %q", d.Name, d.Reason, opened)
		}
	}

	for _, args := range [][]string{
		{"turn", "--agent", agentFile, "--always-on", "gate", "hello"},
		{"turn", "--agent", agentFile, "--dtm", "--always-on", "sometimes", "hello"},
	} {
		if code, _, stderr := run(t, dir, args...); code != 2 || !strings.Contains(stderr, "--always-on") {
			t.Errorf("%v: exit %d, %q; want a usage error naming --always-on", args, code, stderr)
		}
	}
}

// TestTurnDeliberateGatedStillHasTools: when Deliberate Tool Mode hides
// every tool for now (the organisation gates the always-on ones too), the
// default prompt still says the agent can use tools — they open when
// asked for — and the turn that opens web search keeps its opening.
func TestTurnDeliberateGatedStillHasTools(t *testing.T) {
	dir := t.TempDir()
	web := filepath.Join(dir, "researcher.yaml")
	writeFile(t, web, "name: researcher\ntools: [web_search]\n")
	system := func(msg string) (string, int) {
		t.Helper()
		code, out, stderr := run(t, dir, "turn", "--json", "--dtm", "--always-on", "gate", "--agent", web, msg)
		if code != 0 {
			t.Fatalf("turn %q: exit %d: %s", msg, code, stderr)
		}
		var got app.TurnOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got.System, len(got.Tools)
	}
	hello, n := system("hello")
	if n != 1 || strings.Contains(hello, "cannot use tools") || !strings.Contains(hello, "You can use tools") {
		t.Fatalf("%d tools; system prompt:\n%s", n, hello)
	}
	search, n := system("search the web for the weather in Hanoi")
	if n <= 1 || !strings.HasPrefix(search, hello[:strings.Index(hello, "You can use tools")]) {
		t.Errorf("the opened turn's prompt does not keep the gated turn's opening (%d tools):\n%s", n, search)
	}
}

// TestIntentMatchesTheTurn: quiver intent lists what quiver turn --dtm
// declares for the same message, in the same order, and no tool Quiver
// does not ship; a family that opens none says so.
func TestIntentMatchesTheTurn(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "all.yaml")
	writeFile(t, all, "name: all\ntools: [web_search, url_fetch, research]\n")
	for _, mode := range []string{"keep", "gate"} {
		for _, msg := range []string{"search the web for the weather in Hanoi", "hello", "what is 17% of 2340"} {
			code, out, stderr := run(t, dir, "intent", "--json", "--always-on", mode, msg)
			if code != 0 {
				t.Fatalf("intent: exit %d: %s", code, stderr)
			}
			var in intent.Report
			if err := json.Unmarshal([]byte(out), &in); err != nil {
				t.Fatal(err)
			}
			code, out, stderr = run(t, dir, "turn", "--json", "--dtm", "--always-on", mode, "--agent", all, msg)
			if code != 0 {
				t.Fatalf("turn: exit %d: %s", code, stderr)
			}
			var tu app.TurnOutput
			if err := json.Unmarshal([]byte(out), &tu); err != nil {
				t.Fatal(err)
			}
			var declared []string
			for _, d := range tu.Tools {
				declared = append(declared, d.Name)
			}
			if diff := cmp.Diff(declared, in.Tools, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s, %q: intent's tools differ from the turn's (-turn +intent):\n%s", mode, msg, diff)
			}
		}
	}
	code, out, _ := run(t, dir, "intent", "draw me a picture of a red fox")
	if code != 0 || !strings.Contains(out, "(image opens no tool: none of its tools ships yet)") || strings.Contains(out, "generate_image") {
		t.Errorf("a family without tools:\n%s", out)
	}
	code, out, _ = run(t, dir, "intent", "remind me tomorrow at 9 to call Bob")
	if code != 0 || !strings.Contains(out, "schedule_task              opened by: reminder") || strings.Contains(out, "opens no tool") {
		t.Errorf("the reminder family opens the scheduled-task tools:\n%s", out)
	}
	// A family whose shipped tool is already declared as kept is not one
	// without tools.
	code, out, _ = run(t, dir, "intent", "calculate 12*7 please")
	if code != 0 || !strings.Contains(out, "opens: calculator") || strings.Contains(out, "opens no tool") {
		t.Errorf("the calculator family, kept helper:\n%s", out)
	}
}

// TestIntentBadPacksDir: a pack in intent.packs_dir that does not
// validate is bad input naming the folder, the file and the line: one
// line, exit 2, nothing printed on standard output.
func TestIntentBadPacksDir(t *testing.T) {
	dir := t.TempDir()
	packs := filepath.Join(dir, "packs")
	if err := os.Mkdir(packs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(packs, "zz.yaml"), []byte("lang: zz\ntriggers:\n  image:\n    - dr(a|e)w\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "quiver.yaml")
	if err := os.WriteFile(cfg, []byte("intent:\n  packs_dir: "+packs+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, t.TempDir(), "intent", "--config", cfg, "draw a cat")
	want := "quiver: intent.packs_dir " + packs + ": zz.yaml:4: "
	if code != 2 || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a line starting %q", code, out, stderr, want)
	}
}

// TestRecoveryToolOpensAFamilyMidTurn: under the mode, a message the
// detector does not understand leaves the workspace closed; the model
// calls enable_tools for files, and its next step declares the workspace
// tools after the earlier ones (the earlier declarations byte for byte
// the same), the call to list_files runs, and the family stays open for
// the conversation's next turn.
func TestRecoveryToolOpensAFamilyMidTurn(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", intent.RecoveryTool, map[string]string{"family": "files", "reason": "their notes"})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c2", "list_files", map[string]string{})}},
		llmtest.Reply{Text: []string{"Your folder is empty."}},
		llmtest.Reply{Text: []string{"You're welcome."}},
	)
	data := t.TempDir()
	chat := chatEnv(t, data, srv, "")
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on"); code != 0 {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	for _, msg := range []string{"hmm, what's lying around in there?", "thanks"} {
		if code, _, stderr := chat("chat", "--agent", agentFile, "--conversation", "c-recover", "--json", msg); code != 0 {
			t.Fatalf("%q: exit %d: %s", msg, code, stderr)
		}
	}
	seen := srv.Seen()
	if len(seen) != 4 {
		t.Fatalf("%d model calls, want 4", len(seen))
	}
	if got := toolNames(seen[0].Req); !slices.Equal(got, modeKept) {
		t.Fatalf("first step declared %v, want %v", got, modeKept)
	}
	second := toolNames(seen[1].Req)
	if !slices.Equal(second[:len(modeKept)], modeKept) || !slices.Contains(second, "list_files") || !slices.Contains(second, "delete_file") {
		t.Fatalf("after enable_tools declared %v, want %v then the workspace tools", second, modeKept)
	}
	for i := range seen[0].Req.Tools {
		if a, b := fmt.Sprint(seen[0].Req.Tools[i]), fmt.Sprint(seen[1].Req.Tools[i]); a != b {
			t.Errorf("declaration %d changed between the steps:\n%s\n%s", i, a, b)
		}
	}
	msgs := seen[2].Req.Messages
	if last := msgs[len(msgs)-1]; len(last.Results) != 1 || strings.Contains(last.Results[0].Content, "is not available") {
		t.Errorf("list_files after the recovery answered %+v", last.Results)
	}
	var opened llm.Message
	for _, m := range msgs {
		for _, r := range m.Results {
			if r.CallID == "c1" {
				opened = m
			}
		}
	}
	if len(opened.Results) != 1 || !strings.Contains(opened.Results[0].Content, "Now declared, from your next step: list_files") {
		t.Errorf("enable_tools answered %+v", opened.Results)
	}
	if got := toolNames(seen[3].Req); !slices.Contains(got, "list_files") {
		t.Errorf("the next turn declared %v, want the workspace open for the conversation", got)
	}
	code, out, _ := run(t, data, "transcript", "c-recover", "--json")
	if code != 0 || !strings.Contains(out, "the model opened list_files") {
		t.Errorf("the thought log does not record what the model opened:\n%s", out)
	}
}

// TestRecoveryToolKeepsNothingItCouldNotOpen: the model asks enable_tools
// for the web, which this agent's allowlist leaves out; the call says no
// tool was added, and the family is not recorded open for the
// conversation (it would be kept open on every later turn otherwise).
func TestRecoveryToolKeepsNothingItCouldNotOpen(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", intent.RecoveryTool, map[string]string{"family": "search", "reason": "the weather"})}},
		llmtest.Reply{Text: []string{"I cannot search the web here."}},
	)
	data := t.TempDir()
	chat := chatEnv(t, data, srv, "")
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on"); code != 0 {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := chat("chat", "--agent", agentFile, "--conversation", "c-closed", "--json", "hmm, rain later or not?"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := srv.Seen()
	if len(seen) != 2 {
		t.Fatalf("%d model calls, want 2", len(seen))
	}
	msgs := seen[1].Req.Messages
	last := msgs[len(msgs)-1]
	if len(last.Results) != 1 || !strings.Contains(last.Results[0].Content, "No tool was added") {
		t.Errorf("enable_tools answered %+v, want no tool added", last.Results)
	}
	if got := toolNames(seen[1].Req); slices.Contains(got, "web_search") {
		t.Errorf("the agent's allowlist leaves the web out, yet %v were declared", got)
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	open, err := st.OpenIntentTargets(context.Background(), "default", "c-closed", nil)
	if err != nil || slices.Contains(open, intent.Search) {
		t.Errorf("open targets %v (%v): the family nothing could be declared of is recorded open", open, err)
	}
}

// TestRecoveryToolSurvivesAPause: a turn under the mode that pauses on a
// question resumes with the same declarations, the recovery tool among
// them, and it can still open a family there.
func TestRecoveryToolSurvivesAPause(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("q", "ask_clarifying_question", map[string]any{"question": "Which folder?"})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", intent.RecoveryTool, map[string]string{"family": "files", "reason": "their notes"})}},
		llmtest.Reply{Text: []string{"Done."}},
	)
	data := t.TempDir()
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on"); code != 0 {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	chat := chatEnv(t, data, srv, "hmm, what's lying around in there?\nthe notes one\n")
	if code, _, stderr := chat("chat", "--agent", agentFile, "--conversation", "c-pause"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := srv.Seen()
	if len(seen) != 3 {
		t.Fatalf("%d model calls, want 3", len(seen))
	}
	if a, b := toolNames(seen[0].Req), toolNames(seen[1].Req); !slices.Equal(a, modeKept) || !slices.Equal(b, a) {
		t.Fatalf("declared %v before the pause and %v after, want %v both times", a, b, modeKept)
	}
	if got := toolNames(seen[2].Req); !slices.Contains(got, "list_files") {
		t.Errorf("after enable_tools on the resumed turn declared %v, want the workspace", got)
	}
}

// TestTriggersModeClassifierShift: quiver triggers mode sets a
// community's classifier shift (rounded to hundredths) and says so, keeps
// it when the flag is left out, clears it with default, and refuses a
// value out of range with a usage error, changing nothing.
func TestTriggersModeClassifierShift(t *testing.T) {
	data := t.TempDir()
	steps := []struct {
		args []string
		want string // in the confirmation; "" for none of the shift
	}{
		{[]string{"--classifier-shift", "0.123"}, "classifier shift: +0.12"},
		{nil, "classifier shift: +0.12"},
		{[]string{"--classifier-shift", "-0.5"}, "classifier shift: -0.50"},
		{[]string{"--classifier-shift", "default"}, ""},
	}
	for _, st := range steps {
		args := append([]string{"triggers", "mode", "--server", "Acme", "on"}, st.args...)
		code, out, stderr := run(t, data, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", st.args, code, stderr)
		}
		if st.want != "" && !strings.Contains(out, st.want) || st.want == "" && strings.Contains(out, "classifier shift") {
			t.Errorf("%v: %q, want %q", st.args, out, st.want)
		}
	}
	for _, bad := range []string{"0.6", "-0.51", "often", "NaN"} {
		if code, _, stderr := run(t, data, "triggers", "mode", "--server", "Acme", "on", "--classifier-shift", bad); code != 2 || !strings.Contains(stderr, "--classifier-shift") {
			t.Errorf("--classifier-shift %s: exit %d, %q; want a usage error naming the flag", bad, code, stderr)
		}
	}
	if code, _, stderr := run(t, data, "triggers", "list", "--server", "Acme", "--classifier-shift", "0.1"); code != 2 || !strings.Contains(stderr, "mode only") {
		t.Errorf("list --classifier-shift: exit %d, %q", code, stderr)
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.GetIntentSettings(context.Background(), "acme"); err != nil || s.ClassifierShift != nil {
		t.Errorf("after default and refused values: %+v, %v; want no shift stored", s, err)
	}
}

// TestIntentSemanticStage: with intent.semantic on, `quiver intent
// --json` adds the families the semantic stage opens under the
// configuration's embedding model (the built-in local one by default),
// named as such with their similarity; the stage is off by default, and
// with embedding_model: off there is no model for it.
func TestIntentSemanticStage(t *testing.T) {
	ctx := context.Background()
	// A validation message the packs and the classifier leave closed
	// and the stage opens a family for, under the local embedder.
	lines, err := intent.ReadCorpus(os.DirFS("../../intent"), "testdata/corpus/validation/*.jsonl", intent.CorpusFamilies)
	if err != nil {
		t.Fatal(err)
	}
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	det := intent.New(packs).WithClassifier(c, 0)
	sem, err := intent.BuiltinSemantic()
	if err != nil {
		t.Fatal(err)
	}
	var message string
	var want intent.Match
	for _, l := range lines {
		res := det.Detect(intent.Input{Text: l.Text})
		ms, err := sem.Match(ctx, embed.Local{}, l.Text, res)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			message, want = l.Text, ms[0]
			break
		}
	}
	if message == "" {
		t.Fatal("no validation message the semantic stage adds a family for")
	}
	dir := t.TempDir()
	matches := func(config string) []intent.Match {
		t.Helper()
		args := []string{"intent", "--json", message}
		if config != "" {
			cfg := filepath.Join(dir, "quiver.yaml")
			writeFile(t, cfg, config)
			args = []string{"intent", "--config", cfg, "--json", message}
		}
		code, out, stderr := run(t, dir, args...)
		if code != 0 {
			t.Fatalf("intent: exit %d: %s", code, stderr)
		}
		var r intent.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.Matches
	}
	if got := matches("intent:\n  semantic: on\n"); !slices.Contains(got, want) {
		t.Errorf("%q with the stage on: matches %+v, want %+v", message, got, want)
	}
	for _, config := range []string{"", "intent:\n  semantic: off\n", "intent:\n  semantic: on\nembedding_model: off\n"} {
		if got := matches(config); slices.ContainsFunc(got, func(m intent.Match) bool { return m.Source == intent.SourceSemantic }) {
			t.Errorf("config %q: semantic matches %+v", config, got)
		}
	}
}

// TestChatSemanticThoughtLog: in a chat turn with intent.semantic on
// (and the classifier off, so the packs alone come before it), a
// message only the semantic stage understands opens the calculator for
// a community gating the always-on helpers, and calling it is
// thought-logged with the stage as its source and the similarity.
func TestChatSemanticThoughtLog(t *testing.T) {
	ctx := context.Background()
	lines, err := intent.ReadCorpus(os.DirFS("../../intent"), "testdata/corpus/validation/*.jsonl", intent.CorpusFamilies)
	if err != nil {
		t.Fatal(err)
	}
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	det := intent.New(packs)
	sem, err := intent.BuiltinSemantic()
	if err != nil {
		t.Fatal(err)
	}
	var message string
	for _, l := range lines {
		res := det.Detect(intent.Input{Text: l.Text})
		if len(res.Targets) > 0 {
			continue
		}
		ms, err := sem.Match(ctx, embed.Local{}, l.Text, res)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 && ms[0].Target == intent.Calculator {
			message = l.Text
			break
		}
	}
	if message == "" {
		t.Fatal("no validation message the packs leave closed and the semantic stage opens the calculator for")
	}
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "42/1.609"})}},
		llmtest.Reply{Text: []string{"about 26 miles"}},
	)
	data := t.TempDir()
	cfg := filepath.Join(data, "quiver.yaml")
	writeFile(t, cfg, "intent:\n  semantic: on\n  classifier: off\n")
	chat := chatEnv(t, data, srv, "")
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on", "--always-on", "gate"); code != 0 {
		t.Fatalf("triggers mode: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := chat("chat", "--agent", agentFile, "--config", cfg, "--conversation", "c-sem", "--json", message); code != 0 {
		t.Fatalf("%q: exit %d: %s", message, code, stderr)
	}
	seen := srv.Seen()
	if len(seen) != 2 || !slices.Contains(toolNames(seen[0].Req), "calculate") {
		t.Fatalf("%d model calls; the first declared %v, want calculate", len(seen), toolNames(seen[0].Req))
	}
	code, out, _ := run(t, data, "transcript", "c-sem", "--json")
	if code != 0 {
		t.Fatal(out)
	}
	if !strings.Contains(out, "Source: semantic") || !strings.Contains(out, "Trigger: similarity 0.") {
		t.Errorf("thought log: %s", out)
	}
}
