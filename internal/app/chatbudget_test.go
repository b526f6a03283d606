package app_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestChatBudget: with the organisation's budget of 100 tokens, the first
// chat runs (nothing spent yet) and records its 120 tokens; the next is
// refused with the budget's message before any request reaches the
// model (the fake server's script holds one reply: a second request
// would fail the test).
func TestChatBudget(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Hello."}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}})
	data := t.TempDir()
	chat := chatEnv(t, data, srv, "")
	if code, _, stderr := chat("budget", "set", "--tokens", "100"); code != 0 {
		t.Fatalf("budget set: exit %d: %s", code, stderr)
	}
	if code, _, stderr := chat("chat", "--agent", agentFile, "hi"); code != 0 {
		t.Fatalf("first chat: exit %d: %s", code, stderr)
	}
	code, _, stderr := chat("chat", "--agent", agentFile, "hi again")
	if code == 0 || !strings.Contains(stderr, "your organisation's spend is 120 tokens of 100 tokens") {
		t.Errorf("over budget: exit %d, %q", code, stderr)
	}
	if n := len(srv.Seen()); n != 1 {
		t.Errorf("model requests = %d, want 1", n)
	}
	_, out, _ := chat("budget", "show")
	if !strings.Contains(out, "organisation  no limit  100 tokens  $0.00, 120 tokens") {
		t.Errorf("budget show = %q", out)
	}
}
