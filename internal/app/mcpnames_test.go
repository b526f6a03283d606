package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/mcpclient"
)

// TestMCPSelfHostedToolsUsable registers Quiver's own "quiver mcp serve"
// (the example agent's toolset, which is all built-in names) as a server
// of another deployment: every served tool is usable there as
// local-tools__<name>, beside the built-ins of the same names. That
// deployment then serves an agent whose toolset is those MCP tools, and a
// third registers it in turn: names nest, and calls reach the first.
func TestMCPSelfHostedToolsUsable(t *testing.T) {
	who := []string{"--agent", agentFile, "--user", "Ana Lima", "--org", "Acme Corp"}
	_, turnJSON, _ := run(t, t.TempDir(), append([]string{"turn", "--json"}, append(who, "hi")...)...)
	var planned app.TurnOutput
	if err := json.Unmarshal([]byte(turnJSON), &planned); err != nil {
		t.Fatal(err)
	}
	var served, wire []string
	for _, d := range planned.Tools {
		served = append(served, d.Name)
		wire = append(wire, "local-tools__"+d.Name)
	}
	if len(served) < 5 || !slices.Contains(served, "calculate") {
		t.Fatalf("the example agent serves %v", served)
	}
	first, _ := startHTTP(t, t.TempDir(), nil)

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := writeConfig(t, dir, "network:\n  mode: self-hosted\n")
	code, out, stderr := runEnv(t, data, nil, "", "mcp", "add", "local-tools", first, "--config", cfg)
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	if want := strings.Join(wire, ", "); !strings.Contains(out, want) {
		t.Errorf("add output %q, want the wire names %q", out, want)
	}
	code, out, _ = runEnv(t, data, nil, "", "mcp", "list", "--json", "--config", cfg)
	var views []mcpclient.View
	if err := json.Unmarshal([]byte(out), &views); code != 0 || err != nil || len(views) != 1 {
		t.Fatalf("list: exit %d, %v: %s", code, err, out)
	}
	var wantNames []mcpclient.ToolName
	for i, name := range served {
		wantNames = append(wantNames, mcpclient.ToolName{Name: wire[i], Tool: name})
	}
	if diff := cmp.Diff(wantNames, views[0].Names); diff != "" {
		t.Errorf("list names (-want +got):\n%s", diff)
	}

	agent := writeConfig(t, t.TempDir(), "name: relay\nmodel: openai:gpt-4.1-mini\ntools: [local-tools/*]\n")
	code, out, stderr = runEnv(t, data, nil, "", "call", "local-tools__calculate", "--agent", agent, "--args", `{"expression":"6*7"}`, "--config", cfg)
	if code != 0 || strings.TrimSpace(out) != "42" {
		t.Fatalf("call local-tools__calculate: exit %d, out %q, err %q", code, out, stderr)
	}

	// The second deployment serves the relay agent: its toolset is the
	// always-on built-ins plus every tool of the first, by wire name. The
	// later --agent and --config flags override startHTTP's.
	second, _ := startHTTP(t, data, nil, "--agent", agent, "--config", cfg)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: second, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
	}
	for _, w := range wire {
		if !slices.Contains(names, w) {
			t.Errorf("the relay serves %v, want %s among them", names, w)
		}
	}
	if text := callTool(t, cs, "local-tools__calculate", map[string]any{"expression": "2+3"}); text != "5" {
		t.Errorf("local-tools__calculate through the relay = %q", text)
	}

	// A third deployment registers the relay: its names nest.
	dir3 := t.TempDir()
	cfg3 := writeConfig(t, dir3, "network:\n  mode: self-hosted\n")
	data3 := filepath.Join(dir3, "data")
	if code, _, stderr := runEnv(t, data3, nil, "", "mcp", "add", "relay", second, "--config", cfg3); code != 0 {
		t.Fatalf("add relay: exit %d: %s", code, stderr)
	}
	agent3 := writeConfig(t, t.TempDir(), "name: far\nmodel: openai:gpt-4.1-mini\ntools: [relay/local-tools__calculate]\n")
	code, out, stderr = runEnv(t, data3, nil, "", "call", "relay__local-tools__calculate", "--agent", agent3, "--args", `{"expression":"6*7"}`, "--config", cfg3)
	if code != 0 || strings.TrimSpace(out) != "42" {
		t.Fatalf("call relay__local-tools__calculate: exit %d, out %q, err %q", code, out, stderr)
	}
}

// TestInspectorShowsMCPOrigins runs a turn through a real quiver serve
// whose model calls a registered server's tool by its wire name: the call
// reaches the server, the inspector and the catalog map each wire name to
// its server and tool, and after another server is registered the past
// turn's inspector restores the same tools under the same names.
func TestInspectorShowsMCPOrigins(t *testing.T) {
	// Both peers start before serve, so that serve stops (and closes its
	// connections to them) before they do.
	peer, other := startMCPPeer(t), startMCPPeer(t)
	model := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "peer__echo", map[string]string{"text": "via the wire name"})}},
		llmtest.Reply{Text: []string{"done"}},
	)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := writeConfig(t, dir, "network:\n  mode: self-hosted\n")
	if code, _, stderr := runEnv(t, data, nil, "", "mcp", "add", "peer", peer.URL, "--config", cfg); code != 0 {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	s := startServeWith(t, map[string]string{"QUIVER_DATA": data, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model.URL}, "--config", cfg)
	a := signIn(t, s)
	def := "name: relay\nmodel: openai:gpt-test\nprompt: Relay.\ntools: [peer/*]\n"
	if code, body := a.do(http.MethodPut, "/api/agents/relay", map[string]string{"definition": def}); code/100 != 2 {
		t.Fatalf("put agent: %d %s", code, body)
	}
	var conv struct{ ID string }
	if code, body := a.do(http.MethodPost, "/api/conversations", map[string]string{"agent": "relay"}); code/100 != 2 || json.Unmarshal(body, &conv) != nil {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	code, body := a.do(http.MethodPost, "/api/conversations/"+conv.ID+"/messages", map[string]string{"message": "echo it"})
	if code != http.StatusOK || !strings.Contains(string(body), "echo: via the wire name") {
		t.Fatalf("send: %d %s", code, body)
	}
	turnID := a.firstTurnID(conv.ID)

	want := []httpapi.ToolOrigin{{Name: "peer__echo", Server: "peer", Tool: "echo"}, {Name: "peer__web_search", Server: "peer", Tool: "web_search"}}
	check := func(when string, in inspection) {
		t.Helper()
		if diff := cmp.Diff(want, in.Origins); diff != "" {
			t.Errorf("%s: origins (-want +got):\n%s", when, diff)
		}
		for _, o := range want {
			if !in.declares(o.Name) {
				t.Errorf("%s: %s not declared: %+v, excluded %+v", when, o.Name, in.Tools, in.Excluded)
			}
		}
		if !in.declares("calculate") {
			t.Errorf("%s: the built-in calculate is not declared", when)
		}
	}
	check("past turn", a.inspect(conv.ID, turnID))
	check("draft", a.inspect(conv.ID, ""))

	var catalog struct{ Tools []httpapi.ToolView }
	if code, body := a.do(http.MethodGet, "/api/tools", nil); code != http.StatusOK || json.Unmarshal(body, &catalog) != nil {
		t.Fatalf("tools: %d %s", code, body)
	}
	i := slices.IndexFunc(catalog.Tools, func(v httpapi.ToolView) bool { return v.Name == "peer__web_search" })
	if i < 0 || catalog.Tools[i].Server != "peer" || catalog.Tools[i].ServerTool != "web_search" || catalog.Tools[i].Family != "mcp:peer" {
		t.Errorf("catalog: %+v", catalog.Tools)
	}

	// Another server offering the same names renames nothing.
	if code, body := a.do(http.MethodPost, "/api/mcp-servers", map[string]string{"name": "other", "url": other.URL}); code != http.StatusCreated {
		t.Fatalf("add other: %d %s", code, body)
	}
	check("past turn after another server", a.inspect(conv.ID, turnID))
	if draft := a.inspect(conv.ID, ""); len(draft.Origins) != 2 || draft.declares("other__echo") {
		t.Errorf("draft after another server: %+v (other/* is not allowed)", draft.Origins)
	}
	if code := s.stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

// TestBuiltinNamesHoldNoSeparator: no built-in tool's name has "__", the
// separator of MCP tools' wire names, so no server's tool can ever be
// declared under a built-in's name.
func TestBuiltinNamesHoldNoSeparator(t *testing.T) {
	code, out, stderr := run(t, t.TempDir(), "tools", "--json")
	var tools app.ToolsOutput
	if err := json.Unmarshal([]byte(out), &tools); code != 0 || err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools: exit %d, %v: %s", code, err, stderr)
	}
	for _, tl := range tools.Tools {
		if strings.Contains(tl.Name, mcpclient.WireSeparator) {
			t.Errorf("built-in %s has %q in its name", tl.Name, mcpclient.WireSeparator)
		}
	}
}
