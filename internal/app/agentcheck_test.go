package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// agentWith writes an agent file with that allowlist (YAML flow list).
func agentWith(t *testing.T, tools string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte("name: helper\nprompt: You help.\ntools: "+tools+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// registerServer stores a registration as "quiver mcp add" would, disabled
// so that nothing connects to it.
func registerServer(t *testing.T, data, org, name string, tools []string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := store.MCPServer{ID: "srv_" + name, OrgID: org, Name: name, URL: "https://" + name + ".example/mcp",
		Type: store.MCPGeneral, Tools: tools, CreatedAt: fixedNow, UpdatedAt: fixedNow}
	if err := st.CreateMCPServer(context.Background(), s, 0); err != nil {
		t.Fatal(err)
	}
}

func TestAgentCheck(t *testing.T) {
	withStore := t.TempDir()
	registerServer(t, withStore, "acme", "github", []string{"create_issue", "list_issues"})
	tests := []struct {
		name       string
		tools      string
		data       string // "" = an empty folder
		org        string
		wantCode   int
		wantStdout []string // lines, without the "FILE: " prefix
	}{
		{name: "clean", tools: "[web_search, url_fetch, research]", wantCode: 0,
			wantStdout: []string{"agent helper: allowlist clean (3 entries)"}},
		{name: "empty", tools: "[]", wantCode: 0, wantStdout: []string{"agent helper: allowlist clean (0 entries)"}},
		{name: "misspelt tool", tools: "[web_serch, calculate]", wantCode: 1,
			wantStdout: []string{`tools: "web_serch" is not a tool or family name; did you mean "web_search"?`}},
		{name: "repeated", tools: "[fetch_url, fetch_url]", wantCode: 1,
			wantStdout: []string{`tools: "fetch_url" is listed more than once`}},
		{name: "MCP entries without a store are not checked", tools: "[web_search, github/*]", wantCode: 0,
			wantStdout: []string{"agent helper: allowlist clean (2 entries)",
				"note: MCP entries (server/tool, server/*) could not be checked: no store in DATA, so no registered servers to check against"}},
		{name: "registered server", tools: "[github/*, github/create_issue]", data: withStore, org: "Acme", wantCode: 0,
			wantStdout: []string{"agent helper: allowlist clean (2 entries)"}},
		{name: "unregistered and misspelt servers", tools: "[gitlab-ee/*, githb/list_issues, github/creat_issue]", data: withStore, org: "Acme", wantCode: 1,
			wantStdout: []string{
				`tools: no MCP server "gitlab-ee" is registered in this organisation`,
				`tools: no MCP server "githb" is registered in this organisation; did you mean "github/list_issues"?`,
				`tools: MCP server "github" had no tool "creat_issue" at its last discovery; did you mean "github/create_issue"?`,
			}},
		{name: "another organisation's server", tools: "[github/*]", data: withStore, org: "Other", wantCode: 1,
			wantStdout: []string{`tools: no MCP server "github" is registered in this organisation`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data
			if data == "" {
				data = t.TempDir()
			}
			file := agentWith(t, tc.tools)
			args := []string{"agent", "check", file}
			if tc.org != "" {
				args = append(args, "--org", tc.org)
			}
			code, out, stderr := run(t, data, args...)
			var want []string
			for _, l := range tc.wantStdout {
				want = append(want, file+": "+strings.ReplaceAll(l, "DATA", data))
			}
			if code != tc.wantCode || stderr != "" {
				t.Errorf("exit %d, stderr %q; want %d and nothing", code, stderr, tc.wantCode)
			}
			if d := cmp.Diff(want, strings.Split(strings.TrimSuffix(out, "\n"), "\n")); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			if tc.data == "" {
				if entries, _ := os.ReadDir(data); len(entries) > 0 {
					t.Errorf("check wrote to the data folder: %v", entries)
				}
			}
		})
	}
}

func TestAgentCheckJSON(t *testing.T) {
	data := t.TempDir()
	registerServer(t, data, "default", "github", nil)
	file := agentWith(t, "[web_serch, github/anything, gitlab/*]")
	code, out, stderr := run(t, data, "agent", "check", file, "--json")
	if code != 1 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 1", code, stderr)
	}
	var got app.AgentCheckOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	want := app.AgentCheckOutput{File: file, Agent: "helper", MCPChecked: true, Warnings: []registry.Warning{
		{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"},
		{Entry: "gitlab/*", Message: `no MCP server "gitlab" is registered in this organisation`, Suggestion: "github/*"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("--json (-want +got):\n%s", d)
	}

	code, out, _ = run(t, t.TempDir(), "agent", "check", agentWith(t, "[github/*]"), "--json")
	if code != 0 || !strings.Contains(out, `"warnings": []`) || !strings.Contains(out, `"mcp_checked": false`) || !strings.Contains(out, `"note": "MCP entries`) {
		t.Errorf("without a store: exit %d\n%s", code, out)
	}
}

// TestAgentCheckBadInput: an unreadable or invalid file, or a bad command
// line, is one line on stderr and exit status 2.
func TestAgentCheckBadInput(t *testing.T) {
	invalid := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(invalid, []byte("name: helper\ntools: [\"Web Search\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(t.TempDir(), "quiver.yaml")
	if err := os.WriteFile(badConfig, []byte("colour: red\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"agent", "check"}, "give exactly one agent FILE"},
		{"two files", []string{"agent", "check", invalid, invalid}, "give exactly one agent FILE"},
		{"missing file", []string{"agent", "check", filepath.Join(t.TempDir(), "nope.yaml")}, "no such file"},
		{"invalid entry", []string{"agent", "check", invalid}, `tools[0] "Web Search": not a tool or family name`},
		{"bad config", []string{"agent", "check", agentWith(t, "[]"), "--config", badConfig}, "colour"},
		{"unknown flag", []string{"agent", "check", "--nope", invalid}, "flag provided but not defined"},
		{"no subcommand", []string{"agent"}, "agent: no subcommand"},
		{"unknown subcommand", []string{"agent", "lint"}, `agent: unknown subcommand "lint"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			code, out, stderr := run(t, data, tc.args...)
			if code != 2 || out != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, tc.want)
			}
			if entries, _ := os.ReadDir(data); len(entries) > 0 {
				t.Errorf("data folder written: %v", entries)
			}
		})
	}
}

// TestTurnAllowlistWarning: "quiver turn" warns on stderr about an
// allowlist entry naming nothing, with the closest name; stdout stays the
// request (valid JSON with --json, the warnings in allowlist_warnings),
// and a clean allowlist warns about nothing.
func TestTurnAllowlistWarning(t *testing.T) {
	file := agentWith(t, "[web_serch, research]")
	code, out, stderr := run(t, t.TempDir(), "turn", "--agent", file, "--json", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "quiver: warning: tools: \"web_serch\" is not a tool or family name; did you mean \"web_search\"?\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	var got app.TurnOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	want := []registry.Warning{{Entry: "web_serch", Message: `"web_serch" is not a tool or family name`, Suggestion: "web_search"}}
	if d := cmp.Diff(want, got.AllowlistWarnings); d != "" {
		t.Errorf("allowlist_warnings (-want +got):\n%s", d)
	}
	if !strings.Contains(out, `"research_web"`) {
		t.Errorf("the valid family's tool is not declared:\n%s", out)
	}

	code, out, stderr = run(t, t.TempDir(), "turn", "--agent", file, "hello")
	if code != 0 || !strings.Contains(stderr, `did you mean "web_search"?`) || strings.Contains(out, "web_serch") {
		t.Errorf("text mode: exit %d, stderr %q; the warning belongs on stderr only", code, stderr)
	}

	code, out, stderr = run(t, t.TempDir(), "turn", "--agent", agentWith(t, "[web_search, team/*]"), "--json", "hello")
	if code != 0 || stderr != "" || strings.Contains(out, "allowlist_warnings") {
		t.Errorf("clean allowlist: exit %d, stderr %q, allowlist_warnings in output: %v", code, stderr, strings.Contains(out, "allowlist_warnings"))
	}
}

// TestAgentCheckSwitches: a switch that changes nothing (misspelt, an
// always-on family, one with no tool yet) is a warning of quiver agent
// check and of quiver turn, like an allowlist entry.
func TestAgentCheckSwitches(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	writeFile(t, file, "name: helper\ntools: [web_search]\nswitches: {web_serch: false, workspace: false, voice_message: true, url_fetch: false}\n")
	code, out, stderr := run(t, t.TempDir(), "agent", "check", file)
	want := []string{
		file + `: switches: switch "voice_message" gates the voice_message family, which has no tool yet: setting it changes nothing`,
		file + `: switches: "web_serch" is not a switch or tool family name: it changes nothing; did you mean "web_search"?`,
		file + `: switches: "workspace" is a family of always-on tools: only tool_use turns them off (and every other tool with them), so this switch changes nothing`,
	}
	if code != 1 || stderr != "" {
		t.Errorf("exit %d, stderr %q; want 1 and nothing", code, stderr)
	}
	if d := cmp.Diff(want, strings.Split(strings.TrimSuffix(out, "\n"), "\n")); d != "" {
		t.Errorf("stdout (-want +got):\n%s", d)
	}
	code, _, stderr = run(t, t.TempDir(), "turn", "--agent", file, "hello")
	if code != 0 || !strings.Contains(stderr, `quiver: warning: switches: "web_serch" is not a switch`) {
		t.Errorf("quiver turn: exit %d, stderr %q", code, stderr)
	}
}
