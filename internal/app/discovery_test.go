package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// deferringSetup writes an agent allowed the memory family and a config
// that defers past 12 tools, so the agent's 15 are deferred.
func deferringSetup(t *testing.T) (agentPath, configPath string) {
	t.Helper()
	dir := t.TempDir()
	agentPath = filepath.Join(dir, "agent.yaml")
	configPath = filepath.Join(dir, "quiver.yaml")
	if err := os.WriteFile(agentPath, []byte("name: helper\nmodel: openai:gpt-4.1-mini\nprompt: You help.\ntools: [memory]\nswitches:\n  memory: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(configPath, []byte("discovery:\n  defer_over_tools: 12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return agentPath, configPath
}

// TestDeferredToolsAreFoundAndKept: past its size a turn declares the
// always-on tools and the discovery tools; search_tools declares what it
// finds from the next step on, appended after the tools declared before
// (byte-identical), the found tool runs, and the next turn of the
// conversation starts with the prefix the last one ended with.
func TestDeferredToolsAreFoundAndKept(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", discovery.SearchName, map[string][]string{"queries": {"save a memory about the user"}})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c2", "save_memory", map[string]string{"text": "Ana likes green tea."})}},
		llmtest.Reply{Text: []string{"Noted."}},
		llmtest.Reply{Text: []string{"You're welcome."}},
	)
	data := t.TempDir()
	agentPath, cfg := deferringSetup(t)
	chat := chatEnv(t, data, srv, "")
	for _, msg := range []string{"remember that I like green tea", "thanks"} {
		if code, _, stderr := chat("chat", "--agent", agentPath, "--config", cfg, "--conversation", "c-defer", "--json", msg); code != 0 {
			t.Fatalf("%q: exit %d: %s", msg, code, stderr)
		}
	}
	seen := srv.Seen()
	if len(seen) != 4 {
		t.Fatalf("%d model calls, want 4", len(seen))
	}
	first := toolNames(seen[0].Req)
	want := slices.Concat([]string{"list_files", "search_files", "read_file", "write_file", "edit_file", "delete_file"}, alwaysOnHelpers, discovery.Names)
	if !slices.Equal(first, want) {
		t.Fatalf("the first step declared %v, want %v", first, want)
	}
	second := toolNames(seen[1].Req)
	if len(second) <= len(first) || !slices.Contains(second[len(first):], "save_memory") {
		t.Fatalf("after search_tools declared %v, want %v then what it found", second, first)
	}
	for i := range seen[0].Req.Tools {
		if a, b := fmt.Sprint(seen[0].Req.Tools[i]), fmt.Sprint(seen[1].Req.Tools[i]); a != b {
			t.Errorf("declaration %d changed between the steps:\n%s\n%s", i, a, b)
		}
	}
	if seen[0].Req.System != seen[1].Req.System {
		t.Errorf("the system prompt changed mid-turn")
	}
	msgs := seen[2].Req.Messages
	last := msgs[len(msgs)-1]
	if len(last.Results) != 1 || last.Results[0].IsError || strings.Contains(last.Results[0].Content, "not available") {
		t.Errorf("save_memory after search_tools answered %+v", last.Results)
	}
	if seen[3].Req.System != seen[0].Req.System {
		t.Errorf("the next turn's system prompt is not the first turn's")
	}
	// The next turn declares what the conversation called, after the
	// first turn's start: save_memory, in the place it had.
	next := toolNames(seen[3].Req)
	if !slices.Equal(next, append(slices.Clone(first), "save_memory")) {
		t.Errorf("the next turn declared %v, want %v then save_memory", next, first)
	}
}

// TestSmallToolsetsAreNotDeferred: under the size, every selected tool
// is declared and the discovery tools are not.
func TestSmallToolsetsAreNotDeferred(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Hi."}})
	data := t.TempDir()
	agentPath, _ := deferringSetup(t)
	chat := chatEnv(t, data, srv, "")
	if code, _, stderr := chat("chat", "--agent", agentPath, "--json", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := toolNames(srv.Seen()[0].Req)
	if !slices.Contains(got, "save_memory") || slices.Contains(got, discovery.SearchName) {
		t.Errorf("declared %v", got)
	}
}

// TestDeferredToolsLoadByReferenceOnAnthropic: on a model that loads
// deferred tools itself, every tool the turn may use is sent, the rest
// marked deferred; search_tools' result references what it found
// (tool_reference), and the request's tools stay byte-identical, so the
// cached prefix holds across the load.
func TestDeferredToolsLoadByReferenceOnAnthropic(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Anthropic{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", discovery.SearchName, map[string][]string{"queries": {"save a memory about the user"}})}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c2", "save_memory", map[string]string{"text": "Ana likes green tea."})}},
		llmtest.Reply{Text: []string{"Noted."}},
	)
	data := t.TempDir()
	agentPath, cfg := deferringSetup(t)
	body, err := os.ReadFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agentPath, []byte(strings.Replace(string(body), "openai:gpt-4.1-mini", "anthropic:claude-sonnet-4-5", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := app.Env{Stdout: &out, Stderr: &errb, Now: func() time.Time { return fixedNow },
		Getenv: func(k string) string {
			return map[string]string{"QUIVER_DATA": data, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}[k]
		}}
	if code := cli.Main(context.Background(), []string{"chat", "--agent", agentPath, "--config", cfg, "--conversation", "c-native", "--json", "remember that I like green tea"}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	seen := srv.Seen()
	if len(seen) != 3 {
		t.Fatalf("%d model calls, want 3", len(seen))
	}
	first := seen[0].Req
	deferred := func(r llm.Request) []string {
		var names []string
		for _, d := range r.Deferred {
			names = append(names, d.Name)
		}
		return names
	}
	if !slices.Contains(deferred(first), "save_memory") || slices.Contains(toolNames(first), "save_memory") || !slices.Contains(toolNames(first), discovery.SearchName) {
		t.Fatalf("declared %v, deferred %v", toolNames(first), deferred(first))
	}
	tools := func(raw []byte) string {
		var v struct{ Tools json.RawMessage }
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return string(v.Tools)
	}
	for i := 1; i < 3; i++ {
		if tools(seen[i].Raw) != tools(seen[0].Raw) || seen[i].Req.System != first.System {
			t.Errorf("call %d sent other tools or another system prompt than the first", i+1)
		}
	}
	var refs []string
	for _, m := range seen[1].Req.Messages {
		for _, r := range m.Results {
			if r.CallID == "c1" {
				refs = r.References
			}
		}
	}
	if !slices.Contains(refs, "save_memory") {
		t.Errorf("search_tools' result references %v, want save_memory among them", refs)
	}
	msgs := seen[2].Req.Messages
	if last := msgs[len(msgs)-1]; len(last.Results) != 1 || last.Results[0].IsError {
		t.Errorf("save_memory answered %+v", last.Results)
	}
}
