package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestOpenerBadConfigCreatesNothing: every command that opens the data
// folder reads --config before it, so a bad file is one usage line,
// exit 2, and no data folder.
func TestOpenerBadConfigCreatesNothing(t *testing.T) {
	bad := writeConfig(t, t.TempDir(), "netwrk: {}\n")
	commands := [][]string{
		{"chat", "--agent", agentFile, "hi"},
		{"call", "calculate", "--agent", agentFile, "--args", `{"expression":"1+1"}`},
		{"mcp", "serve", "--stdio", "--agent", agentFile},
		{"mcp", "list"},
		{"serve", "--addr", "127.0.0.1:0"},
		{"login-link"},
		{"triggers", "list", "--server", "Acme"},
		{"secrets", "rotate"},
		{"intent", "--server", "Acme", "hi"},
		{"agent", "check", agentFile},
	}
	for _, args := range commands {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			code, out, stderr := run(t, data, append(args, "--config", bad)...)
			if code != 2 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `unknown key "netwrk"`) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming the unknown key", code, out, stderr)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the data folder exists after a bad --config (%v)", err)
			}
		})
	}
}

// TestOpenerRefusesUnreadableSecrets: over a store holding a sealed
// token and no key configured, every command that opens the store
// refuses with the one message, and transcript, which reads no secret,
// still reads the store.
func TestOpenerRefusesUnreadableSecrets(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	st, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	srv := store.MCPServer{ID: "srv1", OrgID: "default", Name: "github", URL: "https://github.example/mcp", Type: store.MCPGeneral,
		Enabled: true, Token: "sealed-token", CreatedAt: fixedNow, UpdatedAt: fixedNow}
	conv := store.Conversation{ID: "c1", OrgID: "default", UserID: "cli", Agent: "assistant", CreatedAt: fixedNow, UpdatedAt: fixedNow}
	if err := st.CreateMCPServer(ctx, srv, 0); err != nil {
		t.Fatal(err)
	}
	if err := st.PutConversation(ctx, conv); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendMessages(ctx, "default", []store.Message{{ConversationID: "c1", TurnID: "t1", Role: "user", Content: "stored hello", CreatedAt: fixedNow}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	for _, args := range [][]string{
		{"call", "calculate", "--agent", agentFile, "--args", `{"expression":"1+1"}`},
		{"mcp", "serve", "--stdio", "--agent", agentFile},
		{"mcp", "list"},
		{"login-link"},
		{"triggers", "list", "--server", "Acme"},
		{"intent", "--server", "Acme", "hi"},
		{"agent", "check", agentFile},
	} {
		if code, out, stderr := run(t, data, args...); code != 1 || out != "" || !strings.Contains(stderr, "no encryption key is configured") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and the refusal", args, code, out, stderr)
		}
	}
	if code, out, stderr := run(t, data, "transcript", "c1"); code != 0 || !strings.Contains(out, "stored hello") {
		t.Errorf("transcript: exit %d, stdout %q, stderr %q; want the stored message", code, out, stderr)
	}
}
