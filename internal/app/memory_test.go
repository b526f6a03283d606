package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// memoryAgent is an agent with the memory switch on, allowed the memory
// tools, on the fake OpenAI server.
const memoryAgent = `name: keeper
model: openai:gpt-4.1-mini
prompt: You remember things.
tools: [memory, short_term_memory]
switches: {memory: true}
`

func writeAgent(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keeper.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// withDatabase is chat with QUIVER_DATABASE_URL set to url ("" runs on
// SQLite in the data folder).
func withDatabase(t *testing.T, data, url string, srv *llmtest.Server) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		env := app.Env{
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Now: func() time.Time { return fixedNow },
			Getenv: func(k string) string {
				return map[string]string{"QUIVER_DATA": data, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL, "QUIVER_DATABASE_URL": url}[k]
			},
		}
		code := cli.Main(context.Background(), args, env)
		return code, out.String(), errb.String()
	}
}

// toolResult is the text of the tool result the model was sent for call
// id, from the requests the fake server saw.
func toolResult(t *testing.T, seen []llmtest.Seen, id string) string {
	t.Helper()
	for _, s := range seen {
		for _, m := range s.Req.Messages {
			for _, r := range m.Results {
				if r.CallID == id {
					return r.Content
				}
			}
		}
	}
	t.Fatalf("no tool result for call %s was sent to the model", id)
	return ""
}

// TestMemoryThroughTurns: through quiver chat and the agent loop, with
// the deployment's default (local) embedding model and no network, a
// model saves a memory in one conversation and finds it in another; a
// second person searching for it finds nothing.
func TestMemoryThroughTurns(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testMemoryThroughTurns(t, backend) })
	}
}

func testMemoryThroughTurns(t *testing.T, backend string) {
	url := ""
	if backend == "postgres" {
		url = pgtest.URL(t)
	}
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("save", "save_memory", map[string]string{"text": "Ana's favourite drink is jasmine tea."})}},
		llmtest.Reply{Text: []string{"Noted."}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("find", "search_memory", map[string]string{"query": "favourite drink"})}},
		llmtest.Reply{Text: []string{"Jasmine tea."}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("peek", "search_memory", map[string]string{"query": "Ana favourite drink jasmine tea"})}},
		llmtest.Reply{Text: []string{"I don't know."}},
	)
	agent := writeAgent(t, memoryAgent)
	chat := withDatabase(t, t.TempDir(), url, srv)
	for _, c := range []struct{ user, conv, msg string }{
		{"Ana", "m-1", "Remember that I love jasmine tea."},
		{"Ana", "m-2", "What do I like to drink?"},
		{"Binh", "m-3", "What does Ana like to drink?"},
	} {
		if code, _, stderr := chat("chat", "--agent", agent, "--user", c.user, "--conversation", c.conv, "--json", c.msg); code != 0 {
			t.Fatalf("%s in %s: exit %d: %s", c.user, c.conv, code, stderr)
		}
	}
	seen := srv.Seen()
	var declared []string
	for _, d := range seen[0].Req.Tools {
		declared = append(declared, d.Name)
	}
	for _, name := range []string{"save_memory", "update_memory", "forget_memory", "search_memory", "update_short_term_memory"} {
		if !strings.Contains(strings.Join(declared, " "), name) {
			t.Errorf("%s is not declared: %v", name, declared)
		}
	}
	saved := toolResult(t, seen, "save")
	id := regexp.MustCompile(`mem_[0-9a-f]+`).FindString(saved)
	if id == "" || !strings.Contains(saved, "personal") {
		t.Fatalf("save_memory answered %q", saved)
	}
	if found := toolResult(t, seen, "find"); !strings.Contains(found, id) || !strings.Contains(found, "jasmine tea") {
		t.Errorf("Ana's search in another conversation = %q, want %s", found, id)
	}
	if peek := toolResult(t, seen, "peek"); strings.Contains(peek, id) || strings.Contains(peek, "jasmine") {
		t.Errorf("Binh's search = %q, finds Ana's memory", peek)
	}
}

// TestMemoryNeedsSwitchAndModel: without the memory switch the memory
// tools are not declared; with embedding_model: off the long-term ones
// are not, while update_short_term_memory still is.
func TestMemoryNeedsSwitchAndModel(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"a"}}, llmtest.Reply{Text: []string{"b"}})
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "quiver.yaml")
	if err := os.WriteFile(cfg, []byte("embedding_model: off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chat := chatEnv(t, data, srv, "")
	off := writeAgent(t, strings.Replace(memoryAgent, "switches: {memory: true}", "switches: {}", 1))
	if code, _, stderr := chat("chat", "--agent", off, "--conversation", "n-1", "--json", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := chat("chat", "--config", cfg, "--agent", writeAgent(t, memoryAgent), "--conversation", "n-2", "--json", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	names := func(s llmtest.Seen) string {
		var out []string
		for _, d := range s.Req.Tools {
			out = append(out, d.Name)
		}
		return " " + strings.Join(out, " ") + " "
	}
	seen := srv.Seen()
	if got := names(seen[0]); strings.Contains(got, "memory") {
		t.Errorf("memory switch not on: declared %s", got)
	}
	if got := names(seen[1]); strings.Contains(got, " save_memory ") || strings.Contains(got, " search_memory ") || !strings.Contains(got, " update_short_term_memory ") {
		t.Errorf("embedding_model off: declared %s, want update_short_term_memory alone of the memory tools", got)
	}
}

// TestShortTermMemoryInNextTurn: what update_short_term_memory keeps is in
// the next turn's context message of that conversation, not in its
// system prompt, and not in another conversation's.
func TestShortTermMemoryInNextTurn(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testShortTermMemoryInNextTurn(t, backend) })
	}
}

func testShortTermMemoryInNextTurn(t *testing.T, backend string) {
	url := ""
	if backend == "postgres" {
		url = pgtest.URL(t)
	}
	note := "Task: plan the offsite. Open: venue."
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("note", "update_short_term_memory", map[string]string{"text": note})}},
		llmtest.Reply{Text: []string{"Noted."}},
		llmtest.Reply{Text: []string{"We are planning the offsite."}},
		llmtest.Reply{Text: []string{"Hello."}},
	)
	agent := writeAgent(t, memoryAgent)
	chat := withDatabase(t, t.TempDir(), url, srv)
	for _, c := range []struct{ conv, msg string }{{"s-1", "Let's plan the offsite."}, {"s-1", "Where were we?"}, {"s-2", "Hi"}} {
		if code, _, stderr := chat("chat", "--agent", agent, "--conversation", c.conv, "--json", c.msg); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.conv, code, stderr)
		}
	}
	seen := srv.Seen()
	if len(seen) != 4 {
		t.Fatalf("%d model calls, want 4", len(seen))
	}
	if got := toolResult(t, seen, "note"); !strings.Contains(got, "saved") {
		t.Fatalf("update_short_term_memory answered %q", got)
	}
	holds := func(s llmtest.Seen) (inSystem, inContext bool) {
		inSystem = strings.Contains(s.Req.System, note)
		for _, m := range s.Req.Messages {
			if strings.Contains(m.Text, "Short-term memory of this conversation") && strings.Contains(m.Text, note) {
				inContext = true
			}
		}
		return inSystem, inContext
	}
	if sys, ctx := holds(seen[2]); sys || !ctx {
		t.Errorf("the next turn: in the system prompt %v, in the context message %v; want false, true", sys, ctx)
	}
	if seen[0].Req.System != seen[2].Req.System {
		t.Error("the system prompt changed between the turns")
	}
	if _, ctx := holds(seen[3]); ctx {
		t.Error("another conversation's turn shows the short-term memory")
	}
}
