package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// chatEnv runs the CLI against a fake OpenAI server on loopback, through the
// real adapter and wire format.
func chatEnv(t *testing.T, data string, srv *llmtest.Server, stdin string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		env := app.Env{
			Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
			Now: func() time.Time { return fixedNow },
			Getenv: func(k string) string {
				switch k {
				case "QUIVER_DATA":
					return data
				case "OPENAI_API_KEY":
					return "test-key"
				case "OPENAI_BASE_URL":
					return srv.URL
				}
				return ""
			},
		}
		code := cli.Main(context.Background(), args, env)
		return code, out.String(), errb.String()
	}
}

func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestChatOneShotJSON(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "17.5% * 2340"})}},
		llmtest.Reply{Text: []string{"It is ", "409.5."}, Usage: llm.Usage{InputTokens: 50, OutputTokens: 5}},
	)
	data := t.TempDir()
	chat := chatEnv(t, data, srv, "")
	code, out, stderr := chat("chat", "--agent", agentFile, "--conversation", "conv-1", "--json", "What is 17.5% of 2340?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	evs := events(t, out)
	var types []string
	for _, ev := range evs {
		types = append(types, ev["type"].(string))
		if ev["conversation_id"] != "conv-1" {
			t.Errorf("event without the conversation id: %v", ev)
		}
	}
	want := "tool_call usage tool_result text text usage done"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	// The calculator really ran, and the transcript has the whole turn.
	code, out, _ = chat("transcript", "conv-1", "--json")
	if code != 0 || !strings.Contains(out, `"content": "409.5"`) || !strings.Contains(out, `"role": "tool_call"`) {
		t.Errorf("transcript: exit %d\n%s", code, out)
	}
	// Another user cannot read it.
	if code, _, stderr := chat("transcript", "conv-1", "--user", "Mallory"); code != 2 || !strings.Contains(stderr, "no conversation") {
		t.Errorf("other user's transcript: exit %d, %q", code, stderr)
	}
}

func TestChatLinesArePausedAndResumed(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("q", "ask_clarifying_question", map[string]any{"question": "Which year?"})}},
		llmtest.Reply{Text: []string{"Revenue for 2025 was 12."}},
		llmtest.Reply{Text: []string{"You're welcome."}},
	)
	chat := chatEnv(t, t.TempDir(), srv, "show revenue\n2025\nthanks\n")
	code, out, stderr := chat("chat", "--agent", agentFile, "--conversation", "c2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"? Which year?", "Revenue for 2025 was 12.", "You're welcome."} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	seen := srv.Seen()
	if len(seen) != 3 {
		t.Fatalf("%d model calls, want 3", len(seen))
	}
	// The answer resumed the same turn: the second call carries the question's
	// result and then the answer, with no new context message.
	msgs := seen[1].Req.Messages
	if last := msgs[len(msgs)-1]; last.Role != llm.User || !strings.HasSuffix(last.Text, "2025") {
		t.Errorf("resume did not send the answer last: %+v", last)
	}
}

func TestChatNoModelConnected(t *testing.T) {
	ollama := httptest.NewServer(http.NotFoundHandler())
	ollama.Close() // nothing listens there now
	var out, errb bytes.Buffer
	env := app.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "OLLAMA_HOST" {
			return ollama.URL
		}
		return ""
	}}
	code := cli.Main(context.Background(), []string{"chat", "--agent", agentFile, "hi"}, env)
	if code != 2 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "start Ollama on localhost:11434") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestChatFallsBackToOllama(t *testing.T) {
	tags := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			w.Write([]byte(`{"models":[{"name":"qwen3:8b"}]}`))
			return
		}
		http.NotFound(w, r)
	})
	ollama := httptest.NewServer(tags)
	defer ollama.Close()
	var out, errb bytes.Buffer
	env := app.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		switch k {
		case "OLLAMA_HOST":
			return ollama.URL
		case "QUIVER_DATA":
			return t.TempDir()
		}
		return ""
	}}
	cli.Main(context.Background(), []string{"chat", "--agent", agentFile, "hi"}, env)
	if !strings.Contains(errb.String(), "using ollama:qwen3:8b from "+ollama.URL) {
		t.Errorf("stderr %q", errb.String())
	}
}

// TestChatTextToolProtocol: a model listed under text_tools gets its tools
// in the prompt and its <tool_call> blocks run like native calls.
func TestChatTextToolProtocol(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{Text: []string{"Let me compute.\n<tool_", "call>{\"name\": \"calculate\", \"arguments\": {\"expression\": \"6*7\"}}</tool_call>"}},
		llmtest.Reply{Text: []string{"It is 42."}},
	)
	data := t.TempDir()
	cfgFile := filepath.Join(data, "quiver.yaml")
	writeFile(t, cfgFile, "text_tools: [\"openai:gpt-4.1-mini\"]\n")
	chat := chatEnv(t, data, srv, "")
	code, out, stderr := chat("chat", "--agent", agentFile, "--config", cfgFile, "--conversation", "tp", "what is 6*7?")
	if code != 0 || !strings.Contains(out, "It is 42.") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	seen := srv.Seen()
	if len(seen[0].Req.Tools) != 0 || !strings.Contains(seen[0].Req.System, `"name":"calculate"`) {
		t.Errorf("first request: %d native tools, system prompt without definitions", len(seen[0].Req.Tools))
	}
	if last := seen[1].Req.Messages[len(seen[1].Req.Messages)-1]; !strings.Contains(last.Text, "42") || !strings.Contains(last.Text, "<tool_result") {
		t.Errorf("the result did not go back as a tool_result block: %+v", last)
	}
}
