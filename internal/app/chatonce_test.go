package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// chatLogged runs the CLI as cmd/quiver does: the logger writes to the
// same stderr as the CLI's own lines, at warning level and above.
func chatLogged(t *testing.T, data string, srv *llmtest.Server, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := app.Env{
		Stdout: &out, Stderr: &errb, Now: func() time.Time { return fixedNow },
		Logger: slog.New(slog.NewTextHandler(&errb, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Getenv: func(k string) string {
			return map[string]string{"QUIVER_DATA": data, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL}[k]
		},
	}
	code = cli.Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

// shellWords splits a command line that shellQuote-style quoting wrote
// (words, or words in single quotes with '\” inside).
func shellWords(line string) []string {
	var words []string
	for _, m := range regexp.MustCompile(`'((?:[^']|'\\'')*)'|(\S+)`).FindAllStringSubmatch(line, -1) {
		if m[2] != "" {
			words = append(words, m[2])
		} else {
			words = append(words, strings.ReplaceAll(m[1], `'\''`, `'`))
		}
	}
	return words
}

// TestChatOneShotNamesItsConversation: a one-shot chat says on stderr
// which conversation it wrote and the transcript command that reads it
// (with the caller's flags), and that command prints it.
func TestChatOneShotNamesItsConversation(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Hello, Ana."}})
	data := t.TempDir()
	code, out, stderr := chatLogged(t, data, srv, "chat", "--agent", agentFile, "--user", "Ana O'Neil", "Greet me")
	if code != 0 || !strings.Contains(out, "Hello, Ana.") {
		t.Fatalf("chat: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	m := regexp.MustCompile(`(?m)^quiver: conversation (conv_\S+) \(to read it: (quiver transcript .+)\)$`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr names no conversation: %q", stderr)
	}
	words := shellWords(m[2])
	if words[len(words)-1] != m[1] || !strings.Contains(m[2], `--user 'Ana O'\''Neil'`) {
		t.Errorf("the transcript command %q: want the conversation %s and the caller", m[2], m[1])
	}
	code, out, stderr = chatLogged(t, data, srv, words[1:]...)
	if code != 0 || !strings.Contains(out, "Greet me") || !strings.Contains(out, "Hello, Ana.") {
		t.Errorf("%s: exit %d, stdout %q, stderr %q", m[2], code, out, stderr)
	}
}

// TestChatFailureSaysItOnce: a turn the provider fails ends with one
// friendly line on stderr, then the conversation's name; no raw log line
// repeats the failure.
func TestChatFailureSaysItOnce(t *testing.T) {
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Fail: &llmtest.Failure{Status: 401, Kind: llm.ErrAuth, Message: "bad key sk-secret"}})
	code, _, stderr := chatLogged(t, t.TempDir(), srv, "chat", "--agent", agentFile, "Hello?")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 1 || len(lines) != 2 || !strings.HasPrefix(lines[0], "quiver: ") || !strings.HasPrefix(lines[1], "quiver: conversation conv_") {
		t.Errorf("exit %d, stderr:\n%s\nwant the error, then the conversation, on two lines", code, stderr)
	}
	if strings.Contains(stderr, "level=") || strings.Contains(stderr, "sk-secret") {
		t.Errorf("stderr holds a log line or the provider's raw message:\n%s", stderr)
	}
}
