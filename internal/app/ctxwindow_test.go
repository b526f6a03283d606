package app_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestChatCutsToTheConfiguredWindow: the context window set under models:
// reaches the loop: a conversation that outgrows it is cut, behind the
// marker, and every line is answered.
func TestChatCutsToTheConfiguredWindow(t *testing.T) {
	var replies []llmtest.Reply
	var lines []string
	for range 6 {
		replies = append(replies, llmtest.Reply{Text: []string{strings.Repeat("a", 8000)}})
		lines = append(lines, strings.Repeat("m", 8000))
	}
	srv := llmtest.Start(t, llmtest.OpenAI{}, replies...)
	data := t.TempDir()
	cfg := filepath.Join(data, "quiver.yaml")
	writeFile(t, cfg, "models:\n  'openai:gpt-4.1-mini': {context_window: 16000, output_reserve: 2000}\n")
	chat := chatEnv(t, data, srv, strings.Join(lines, "\n")+"\n")
	if code, _, stderr := chat("chat", "--agent", agentFile, "--config", cfg, "--conversation", "c1"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := srv.Seen()
	if len(seen) != 6 {
		t.Fatalf("%d model calls, want 6", len(seen))
	}
	last := seen[5].Req
	if n := agent.EstimateTokens(last); n > 14000 {
		t.Errorf("last request of %d tokens, over the configured budget of 14,000", n)
	}
	if !strings.Contains(last.Messages[0].Text, "earlier messages of this conversation are not shown") {
		t.Errorf("last request starts with %.80q, want the marker", last.Messages[0].Text)
	}
}
