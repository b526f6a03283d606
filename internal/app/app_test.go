package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/builtin/webrules"
	"github.com/quiverhq/quiver/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

const agentFile = "../../examples/agents/assistant.yaml"

var fixedNow = time.Date(2026, 11, 29, 23, 3, 0, 0, time.UTC)

// run runs the CLI with a fixed clock and an isolated data folder.
func run(t *testing.T, data string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := app.Env{
		Stdout: &out, Stderr: &errb,
		Now: func() time.Time { return fixedNow },
		Getenv: func(k string) string {
			if k == "QUIVER_DATA" {
				return data
			}
			return ""
		},
	}
	code = cli.Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

func TestTurnJSON(t *testing.T) {
	code, out, stderr := run(t, t.TempDir(), "turn", "--agent", agentFile, "--user", "Ana Lima", "--department", "Finance",
		"--org", "Acme Corp", "--tz", "Asia/Ho_Chi_Minh", "--json", "What is 17.5% of 2,340?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden.Check(t, "turn.golden.json", out)
	var got app.TurnOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range got.Tools {
		names = append(names, d.Name)
	}
	want := []string{"list_files", "search_files", "read_file", "write_file", "edit_file", "delete_file",
		"calculate", "read_tool_result", "read_transcript", "ask_clarifying_question", "suggest_next_actions"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("declared tools (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.Context, "Monday 2026-11-30 06:03 (Asia/Ho_Chi_Minh, UTC+07:00)") {
		t.Errorf("context %q lacks the local time", got.Context)
	}
}

func TestTurnText(t *testing.T) {
	code, out, stderr := run(t, t.TempDir(), "turn", "--agent", agentFile, "--user", "Ana Lima", "--org", "Acme Corp", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden.Check(t, "turn.golden.txt", out)
}

func TestTurnWithoutToolSupport(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "a.yaml")
	writeFile(t, agent, "name: plain\nmodel: ollama:tiny:1b\ncapabilities: {tools: false}\nprompt: Be brief.\n")
	code, out, stderr := run(t, dir, "turn", "--agent", agent, "--json", "hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got app.TurnOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if n := len(builtin.CatalogSizes().Tools); len(got.Tools) != 0 || got.System != "Be brief." || len(got.Excluded) != n {
		t.Errorf("tools %d, system %q, excluded %d; want no tools, no fragments, %d reasons", len(got.Tools), got.System, len(got.Excluded), n)
	}
	if got.Model != "ollama:tiny:1b" || !strings.Contains(got.Excluded[0].Reason, "does not support tool calling") {
		t.Errorf("model %q, reason %q", got.Model, got.Excluded[0].Reason)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "name: x\nmodle: openai:y\n")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command given"},
		{"unknown command", []string{"fly"}, `unknown command "fly"`},
		{"unknown flag", []string{"turn", "--agent", agentFile, "--colour", "x", "hi"}, "turn: flag provided but not defined: -colour"},
		{"missing agent", []string{"turn", "hi"}, "--agent is required"},
		{"unreadable agent", []string{"turn", "--agent", filepath.Join(dir, "none.yaml"), "hi"}, "no such file"},
		{"unknown agent key", []string{"turn", "--agent", bad, "hi"}, `line 2: unknown key "modle"`},
		{"unknown timezone", []string{"turn", "--agent", agentFile, "--tz", "Mars/Base", "hi"}, `unknown timezone "Mars/Base"`},
		{"bad model", []string{"turn", "--agent", agentFile, "--model", "gpt4", "hi"}, "write it as provider:model"},
		{"no message", []string{"turn", "--agent", agentFile}, "exactly one MESSAGE"},
		{"invalid JSON", []string{"call", "calculate", "--agent", agentFile, "--args", "{nope"}, "--args: not valid JSON"},
		{"call without tool", []string{"call", "--agent", agentFile}, "exactly one TOOL"},
		{"call bad tz", []string{"call", "calculate", "--agent", agentFile, "--tz", "Nowhere", "--args", "{}"}, "unknown timezone"},
		{"tools extra arg", []string{"tools", "x"}, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, out, stderr := run(t, data, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "quiver: ") || !strings.Contains(last, tc.want) {
				t.Errorf("stderr last line %q, want %q", last, tc.want)
			}
			if len(lines) != 1 || out != "" {
				t.Errorf("want exactly one line on stderr and nothing on stdout; got %q / %q", stderr, out)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("data folder was created on bad input")
			}
		})
	}
}

func TestCall(t *testing.T) {
	data := t.TempDir()
	callJSON := func(args ...string) (int, app.CallOutput) {
		t.Helper()
		code, out, stderr := run(t, data, append(append([]string{"call"}, args...), "--agent", agentFile, "--json")...)
		var got app.CallOutput
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("output %q (stderr %q): %v", out, stderr, err)
		}
		return code, got
	}
	code, got := callJSON("calculate", "--args", `{"expression":"0.1+0.2"}`)
	if code != 0 || got.Content != "0.3" || got.IsError {
		t.Errorf("calculate: exit %d, %+v", code, got)
	}
	code, got = callJSON("web_search", "--args", `{"query":"x"}`)
	if code != 1 || !got.IsError || got.Content != `Tool "web_search" is not available.` {
		t.Errorf("refusal: exit %d, %+v", code, got)
	}
	code, got = callJSON("calculate", "--args", `{"expr":"1"}`)
	if code != 1 || !got.IsError || !strings.Contains(got.Content, `field "expr"`) {
		t.Errorf("validation: exit %d, %+v", code, got)
	}
	// The workspace is scoped by --org and --user from the turn.
	code, got = callJSON("write_file", "--user", "Ana", "--org", "Acme", "--args", `{"files":[{"path":"a.txt","content":"hello"}]}`)
	if code != 0 {
		t.Fatalf("write_file: exit %d, %+v", code, got)
	}
	code, got = callJSON("read_file", "--user", "Ana", "--org", "Acme", "--args", `{"path":"a.txt"}`)
	if code != 0 || !strings.Contains(got.Content, "hello") {
		t.Errorf("read_file as Ana: exit %d, %+v", code, got)
	}
	code, got = callJSON("read_file", "--user", "Bob", "--org", "Acme", "--args", `{"path":"a.txt"}`)
	if code != 1 || strings.Contains(got.Content, "hello") {
		t.Errorf("read_file as Bob must not see Ana's file: exit %d, %+v", code, got)
	}
	if _, err := os.Stat(filepath.Join(data, "workspaces", "acme", "ana", "a.txt")); err != nil {
		t.Errorf("file not in Ana's workspace: %v", err)
	}
}

func TestCallLargeResultRoundTrip(t *testing.T) {
	data := t.TempDir()
	big := strings.Repeat("line of text\n", 1000)
	content, _ := json.Marshal(big)
	code, out, stderr := run(t, data, "call", "write_file", "--agent", agentFile, "--args", `{"files":[{"path":"big.txt","content":`+string(content)+`}]}`)
	if code != 0 {
		t.Fatalf("write: %d %s %s", code, out, stderr)
	}
	code, out, stderr = run(t, data, "call", "read_file", "--agent", agentFile, "--json", "--args", `{"path":"big.txt"}`)
	var got app.CallOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("read: %d %s %s", code, out, stderr)
	}
	if !strings.HasPrefix(got.Ref, "res_") {
		t.Fatalf("large result not stored: ref %q, %d chars", got.Ref, len(got.Content))
	}
	ref := got.Ref
	code, out, _ = run(t, data, "call", "read_tool_result", "--agent", agentFile, "--json", "--args", `{"refs":["`+ref+`"],"maxChars":1024,"offset":1024}`)
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || !strings.Contains(got.Content, "characters 1024–2048 of") {
		t.Errorf("read_tool_result: %d %+v", code, got)
	}
	// The widest page allowed reaches the model whole: it is not stored
	// again behind a new reference.
	code, out, _ = run(t, data, "call", "read_tool_result", "--agent", agentFile, "--json", "--args", `{"refs":["`+ref+`"],"maxChars":20000}`)
	var page app.CallOutput
	if err := json.Unmarshal([]byte(out), &page); err != nil || code != 0 || page.Ref != "" || !strings.Contains(page.Content, "lines 1-1000 of 1000") || strings.Count(page.Content, "line of text") != 1000 {
		t.Errorf("read_tool_result maxChars 20000: exit %d, ref %q, %d chars", code, page.Ref, len(page.Content))
	}
	// Another conversation cannot open the reference.
	code, out, _ = run(t, data, "call", "read_tool_result", "--agent", agentFile, "--conversation", "other", "--json", "--args", `{"refs":["`+ref+`"]}`)
	if code != 1 || strings.Contains(out, "line of text") || !strings.Contains(out, ref+": no such result in this conversation.") {
		t.Errorf("other conversation read the result: %d %s", code, out)
	}
}

// TestCallReadTranscriptIsNotStored: read_transcript's maxChars (up to
// 20,000) is what the model gets, not a preview behind a new reference.
func TestCallReadTranscriptIsNotStored(t *testing.T) {
	data := t.TempDir()
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		m := store.Message{ConversationID: "cli", TurnID: "t1", Role: "user", Content: fmt.Sprintf("%d:%s", i, strings.Repeat("x", 2990)), CreatedAt: fixedNow}
		if _, err := st.AppendMessage(context.Background(), "default", m); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, out, stderr := run(t, data, "call", "read_transcript", "--agent", agentFile, "--conversation", "cli", "--json", "--args", `{"maxChars":20000}`)
	var got app.CallOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if got.Ref != "" || !strings.Contains(got.Content, "#1 user: 0:") || !strings.Contains(got.Content, "#6 user: 5:") {
		t.Errorf("read_transcript maxChars 20000: ref %q, %d chars", got.Ref, len(got.Content))
	}
}

func TestToolsJSON(t *testing.T) {
	code, out, _ := run(t, t.TempDir(), "tools", "--json")
	var got app.ToolsOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d: %v", code, err)
	}
	if got.AlwaysPaid.Ceiling != builtin.AlwaysPaidCeiling || got.Widest.Ceiling != builtin.WidestCeiling {
		t.Errorf("ceilings %+v %+v", got.AlwaysPaid, got.Widest)
	}
	var optional []string
	for _, tl := range got.Tools {
		if !tl.AlwaysOn {
			optional = append(optional, tl.Name)
		}
	}
	if diff := cmp.Diff([]string{"web_search", "fetch_url", "research_web",
		"save_memory", "update_memory", "forget_memory", "search_memory", "update_short_term_memory", "read_document", "search_attachments", "search_knowledge", "check_budget", "search_conversations", "update_tasks", "run_code",
		"create_artifact", "rewrite_artifact", "update_artifact", "save_artifact", "inspect_artifact", "measure_layout", "print_pdf", "load_skill", "schedule_task", "update_scheduled_task",
		"message_metadata", "interact_with_message", "manage_message", "create_thread", "cross_channel_message",
		"select_sticker", "view_profile_picture", "block_user", "unblock_user"}, optional); diff != "" {
		t.Errorf("optional tools (-want +got):\n%s", diff)
	}
}

func TestCallRecordsTurnWithTimezone(t *testing.T) {
	data := t.TempDir()
	code, _, stderr := run(t, data, "call", "calculate", "--agent", agentFile, "--org", "Acme", "--user", "Ana", "--tz", "Asia/Tokyo", "--args", `{"expression":"1+1"}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.GetTurn(context.Background(), "acme", fmt.Sprintf("cli-%d", fixedNow.UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Timezone != "Asia/Tokyo" || got.UserID != "ana" || got.Payer != "acme" || len(got.Tools) != 11 || !got.StartedAt.Equal(fixedNow) {
		t.Errorf("stored turn %+v", got)
	}
	// Why the optional tools were left out is recorded with the turn.
	var left []string
	for _, e := range got.Excluded {
		left = append(left, e.Name)
		if e.Reason == "" {
			t.Errorf("exclusion of %s has no reason", e.Name)
		}
	}
	if diff := cmp.Diff([]string{"web_search", "fetch_url", "research_web",
		"save_memory", "update_memory", "forget_memory", "search_memory", "update_short_term_memory", "read_document", "search_attachments", "search_knowledge", "check_budget", "search_conversations", intent.RecoveryTool, "update_tasks", "run_code",
		"create_artifact", "rewrite_artifact", "update_artifact", "save_artifact", "inspect_artifact", "measure_layout", "print_pdf", "search_tools", "list_tools", "get_tool_schema", "load_skill", "schedule_task", "update_scheduled_task",
		"message_metadata", "interact_with_message", "manage_message", "create_thread", "cross_channel_message",
		"select_sticker", "view_profile_picture", "block_user", "unblock_user"}, left); diff != "" {
		t.Errorf("stored exclusions (-want +got):\n%s", diff)
	}
}

func runStdin(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(context.Background(), args, app.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestPromptRender(t *testing.T) {
	src := "Intro\n{{if capability:self_teaching}}\nUse {memory_tool}.\n{{else}}\nNo memory.\n{{/if}}\n{{if capability:fly}}x{{/if}}{{if}}y{{/if}}{calculator_tool} {\"a\":1}"
	code, out, stderr := runStdin(t, src, "prompt", "render", "--capabilities", "self_teaching", "--tools", "save_memory,calculate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "Intro\nUse `save_memory`.\n`calculate` {\"a\":1}"; out != want {
		t.Errorf("stdout %q, want %q (exactly, no added newline)", out, want)
	}
	wantErr := "warning: unknown capability \"fly\" in {{if capability:fly}}; treated as false\nwarning: line 7: {{if}}: empty condition; block dropped\n"
	if diff := cmp.Diff(wantErr, stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	code, out, _ = runStdin(t, src, "prompt", "render", "--json")
	var got struct {
		Text     string   `json:"text"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("json: %v, exit %d", err, code)
	}
	if got.Text != "Intro\nNo memory.\nthe calculator tool, which is not available right now {\"a\":1}" || len(got.Warnings) != 2 {
		t.Errorf("json output %+v", got)
	}
	code, _, stderr = runStdin(t, strings.Repeat("x", 64<<10+1), "prompt", "render")
	if code != 2 || !strings.Contains(stderr, "over the limit of 65536 bytes") {
		t.Errorf("oversized: exit %d, %q", code, stderr)
	}
	code, _, stderr = runStdin(t, "", "prompt", "draw")
	if code != 2 || !strings.Contains(stderr, "the only subcommand is render") {
		t.Errorf("unknown subcommand: exit %d, %q", code, stderr)
	}
}

// TestChatMessageIsNotATemplate: the user's message reaches the model byte
// for byte, directives and macros included.
func TestChatMessageIsNotATemplate(t *testing.T) {
	msg := "{{if capability:self_teaching}}hi{{/if}} {memory_tool} {{else}}"
	code, out, stderr := run(t, t.TempDir(), "turn", "--agent", agentFile, "--user", "{memory_tool}", "--json", msg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got app.TurnOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Message != msg || !strings.Contains(got.Context, "{memory_tool}") {
		t.Errorf("message %q / context %q changed", got.Message, got.Context)
	}
}

// TestTurnWithWebSearch: an agent that allows web_search declares it, and
// the system prompt carries the tool's web paragraphs.
func TestTurnWithWebSearch(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "a.yaml")
	writeFile(t, agent, "name: researcher\ntools: [web_search]\n")
	code, out, stderr := run(t, dir, "turn", "--agent", agent, "--json", "what happened today?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got app.TurnOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if last := got.Tools[len(got.Tools)-1]; last.Name != "web_search" {
		t.Errorf("last declared tool %q, want web_search", last.Name)
	}
	if !strings.Contains(got.System, webrules.Queries()) || !strings.Contains(got.System, webrules.Untrusted()) {
		t.Errorf("system prompt lacks the web paragraph:\n%s", got.System)
	}
}

// TestFetchURLGoesThroughTheGuard: fetch_url reaches the network only
// through netguard, which refuses loopback in public mode before dialling.
func TestFetchURLGoesThroughTheGuard(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "a.yaml")
	writeFile(t, agent, "name: reader\ntools: [url_fetch]\n")
	code, out, _ := run(t, dir, "call", "fetch_url", "--agent", agent, "--json", "--args", `{"url":"http://127.0.0.1:9/secret?token=abc"}`)
	var got app.CallOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(got.Content, "blocked: address not allowed") || strings.Contains(got.Content, "abc") {
		t.Errorf("exit %d, %+v", code, got)
	}
}

// TestCallSaysWhyALeftOutToolIsRefused: the model-facing refusal names only
// the tool, but the person at the CLI is told the reason on stderr; a name
// no tool has gets no reason.
func TestCallSaysWhyALeftOutToolIsRefused(t *testing.T) {
	data := t.TempDir()
	code, out, stderr := run(t, data, "call", "web_search", "--agent", agentFile, "--args", `{"query":"x"}`)
	if code != 1 || strings.TrimSpace(out) != `Tool "web_search" is not available.` {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if stderr != "quiver: web_search is left out of this turn: not in the agent's allowlist\n" {
		t.Errorf("stderr %q, want the exclusion reason", stderr)
	}
	if code, _, stderr = run(t, data, "call", "no_such_tool", "--agent", agentFile, "--args", `{}`); code != 1 || stderr != "" {
		t.Errorf("unknown tool: exit %d, stderr %q; want 1 and no reason", code, stderr)
	}
}
