package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin/discovery"
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
