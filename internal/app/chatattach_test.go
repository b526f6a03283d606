package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestChatAttach: --attach stores the file in the conversation before the
// turn, which then declares read_document; a binary file stops the chat
// with exit 2 before any turn.
func TestChatAttach(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Read it."}})
	data, dir := t.TempDir(), t.TempDir()
	notes := filepath.Join(dir, "notes.md")
	bin := filepath.Join(dir, "photo.png")
	if err := os.WriteFile(notes, []byte("# Notes\n\nLaunch on Tuesday."), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	chat := chatEnv(t, data, srv, "")
	code, _, stderr := chat("chat", "--agent", agentFile, "--conversation", "conv-a", "--attach", notes, "Summarise the file")
	if code != 0 || !strings.Contains(stderr, "attached notes.md (text,") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := chat("chat", "--agent", agentFile, "--conversation", "conv-b", "--attach", bin, "hello"); code != 2 || !strings.Contains(stderr, "binary file") {
		t.Errorf("binary attachment: exit %d, %q", code, stderr)
	}
}
