package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
)

func toolNames(req llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestChatDeliberateToolMode: with the mode on, an ordinary message
// declares no tools; a calculation opens the calculator (and it stays open,
// first, for the rest of the conversation); a hidden tool called anyway
// gets the ordinary refusal; the use of an opened tool is thought-logged.
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
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "default", "on"); code != 0 {
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
	if got := toolNames(seen[0].Req); len(got) != 0 {
		t.Errorf("ordinary chat declared %v", got)
	}
	if got := toolNames(seen[1].Req); !slices.Equal(got, []string{"calculate"}) {
		t.Errorf("calculation declared %v, want [calculate]", got)
	}
	if got := toolNames(seen[3].Req); !slices.Equal(got, []string{"calculate"}) {
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
	var got app.IntentOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Families, []string{"calculator"}) || !slices.Contains(got.Tools, "calculate") || len(got.Matches) == 0 {
		t.Errorf("got %+v", got)
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

// TestAgentDeliberateOverride turns the organisation's Deliberate Tool
// Mode on and gives one agent deliberate_tool_mode.enabled: false: that
// agent's ordinary chat declares every tool, while an agent without the
// override declares none.
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
	if got := toolNames(seen[0].Req); len(got) != 0 {
		t.Errorf("with the organisation's mode on, ordinary chat declared %v", got)
	}
	if got := toolNames(seen[1].Req); !slices.Contains(got, "calculate") || !slices.Contains(got, "list_files") {
		t.Errorf("with the agent's override off, declared %v, want every tool", got)
	}
}
