package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// anaSecret is what Ana's conversation holds; no other user may read it.
const anaSecret = "Ana's salary review: confidential"

// seedAnaConversation stores, in organisation Acme, Ana's conversation
// "conv-ana" with one message and one stored result holding anaSecret.
func seedAnaConversation(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.PutConversation(ctx, store.Conversation{ID: "conv-ana", OrgID: "acme", UserID: "ana", Agent: "assistant", CreatedAt: fixedNow, UpdatedAt: fixedNow}))
	_, err = st.AppendMessage(ctx, "acme", store.Message{ConversationID: "conv-ana", TurnID: "t-ana", Role: "user", Content: anaSecret, CreatedAt: fixedNow})
	must(err)
	must(st.PutResult(ctx, store.Result{Ref: "res_ana", OrgID: "acme", ConversationID: "conv-ana", TurnID: "t-ana", Tool: "read_file", Body: anaSecret, CreatedAt: fixedNow}, store.ResultQuota{}))
}

// rowCounts counts the rows a call or session could write.
func rowCounts(t *testing.T, data string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]int{}
	for _, table := range []string{"conversations", "turns", "messages", "results"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// TestCallConversationOfAnotherUser: "quiver call --conversation" into a
// conversation of another user is refused (one line, exit 2) before any
// tool runs, so Bob reads neither Ana's transcript nor her stored results
// and writes no turn, message or result into her conversation. Ana still
// uses it.
func TestCallConversationOfAnotherUser(t *testing.T) {
	data := t.TempDir()
	seedAnaConversation(t, data)
	before := rowCounts(t, data)
	for _, c := range []struct{ tool, args string }{
		{"read_transcript", `{"maxChars":20000}`},
		{"read_tool_result", `{"refs":["res_ana"]}`},
		{"calculate", `{"expression":"1+1"}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			code, out, stderr := run(t, data, "call", c.tool, "--agent", agentFile, "--user", "Bob", "--org", "Acme",
				"--conversation", "conv-ana", "--json", "--args", c.args)
			want := `quiver: --conversation: "conv-ana" belongs to another user`
			if code != 2 || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing on stdout, %q", code, out, stderr, want)
			}
			if strings.Contains(out+stderr, anaSecret) {
				t.Errorf("Bob read Ana's conversation: %s %s", out, stderr)
			}
			if d := cmp.Diff(before, rowCounts(t, data)); d != "" {
				t.Errorf("refused call wrote rows (-before +after):\n%s", d)
			}
		})
	}
	code, out, stderr := run(t, data, "call", "read_tool_result", "--agent", agentFile, "--user", "Ana", "--org", "Acme",
		"--conversation", "conv-ana", "--json", "--args", `{"refs":["res_ana"]}`)
	if code != 0 || !strings.Contains(out, anaSecret) {
		t.Errorf("Ana's own call: exit %d, %s %s", code, out, stderr)
	}
}

// TestCallNewConversationBecomesTheCallers: a call into a conversation
// that does not exist yet creates it, owned by the caller, so another user
// is refused there afterwards; callers without --conversation each get
// their own.
func TestCallNewConversationBecomesTheCallers(t *testing.T) {
	data := t.TempDir()
	calc := func(user string, extra ...string) (int, string) {
		t.Helper()
		args := append([]string{"call", "calculate", "--agent", agentFile, "--user", user, "--org", "Acme", "--args", `{"expression":"2*3"}`}, extra...)
		code, _, stderr := run(t, data, args...)
		return code, stderr
	}
	if code, stderr := calc("Bob", "--conversation", "conv-new"); code != 0 {
		t.Fatalf("Bob's new conversation: exit %d: %s", code, stderr)
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetConversation(context.Background(), "acme", "conv-new")
	st.Close()
	if err != nil || c.UserID != "bob" || c.Agent != "assistant" || !c.CreatedAt.Equal(fixedNow) {
		t.Fatalf("conversation after Bob's call = %+v, %v; want Bob's, created now", c, err)
	}
	if code, stderr := calc("Ana", "--conversation", "conv-new"); code != 2 || !strings.Contains(stderr, "belongs to another user") {
		t.Errorf("Ana in Bob's new conversation: exit %d: %s", code, stderr)
	}
	if code, stderr := calc("Bob", "--conversation", "conv-new"); code != 0 {
		t.Errorf("Bob again: exit %d: %s", code, stderr)
	}
	for _, user := range []string{"Ana", "Bob"} {
		if code, stderr := calc(user); code != 0 {
			t.Errorf("%s without --conversation: exit %d: %s", user, code, stderr)
		}
	}
}

// TestMCPServeConversationOfAnotherUser: "quiver mcp serve --stdio
// --conversation" of another user's conversation is refused at start
// (one line, exit 2): no session is served, so no client reads Ana's
// transcript or results, and nothing is written.
func TestMCPServeConversationOfAnotherUser(t *testing.T) {
	data := t.TempDir()
	seedAnaConversation(t, data)
	before := rowCounts(t, data)

	srv := serveStdio(t, data, "--conversation", "conv-ana", "--agent", agentFile, "--user", "Bob", "--org", "Acme")
	cs, err, stderr := srv.cs, srv.err, srv.stderr
	if err == nil {
		// Served: show what Bob's client could read, then end the session.
		for _, name := range []string{"read_transcript", "read_tool_result"} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"refs": []string{"res_ana"}}})
			if err == nil {
				raw, _ := json.Marshal(res.Content)
				if strings.Contains(string(raw), "salary") {
					t.Errorf("Bob's session read Ana's conversation with %s: %s", name, raw)
				}
			}
		}
		cs.Close()
	}
	code := srv.wait()
	want := `quiver: --conversation: "conv-ana" belongs to another user`
	if code != 2 || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
	if d := cmp.Diff(before, rowCounts(t, data)); d != "" {
		t.Errorf("refused serve wrote rows (-before +after):\n%s", d)
	}
}

// TestMCPServeSessionClaimsConversation: a session's first call creates
// its conversation, owned by the caller, so "quiver call" of another user
// is refused there afterwards.
func TestMCPServeSessionClaimsConversation(t *testing.T) {
	data := t.TempDir()
	srv := serveStdio(t, data, "--conversation", "conv-bob", "--agent", agentFile, "--user", "Bob", "--org", "Acme")
	cs, err, stderr := srv.cs, srv.err, srv.stderr
	if err != nil {
		t.Fatalf("connect: %v (stderr %s)", err, stderr.String())
	}
	if text := callTool(t, cs, "calculate", map[string]any{"expression": "6*7"}); text != "42" {
		t.Errorf("calculate = %q", text)
	}
	cs.Close()
	if code := srv.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetConversation(context.Background(), "acme", "conv-bob")
	st.Close()
	if errors.Is(err, store.ErrNotFound) || c.UserID != "bob" {
		t.Fatalf("session's conversation = %+v, %v; want Bob's", c, err)
	}
	code, _, errOut := run(t, data, "call", "read_transcript", "--agent", agentFile, "--user", "Ana", "--org", "Acme",
		"--conversation", "conv-bob", "--args", `{}`)
	if code != 2 || !strings.Contains(errOut, "belongs to another user") {
		t.Errorf("Ana in Bob's session conversation: exit %d: %s", code, errOut)
	}
}

// TestChatConversationOfAnotherUser: "quiver chat --conversation" of
// another user's conversation is refused before anything runs, even when
// its last turn is paused on a question (answering it would resume Ana's
// turn, with her history, as Bob): one line, exit 2, no model request and
// nothing written.
func TestChatConversationOfAnotherUser(t *testing.T) {
	data := t.TempDir()
	seedAnaConversation(t, data)
	st, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	err = st.PutTurn(context.Background(), store.Turn{ID: "t-ana", OrgID: "acme", UserID: "ana", ConversationID: "conv-ana",
		Agent: "assistant", Tools: []string{"calculate"}, Excluded: []store.Exclusion{}, Status: store.TurnPaused,
		Question: "Which year?", StartedAt: fixedNow})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := rowCounts(t, data)
	srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"Resumed."}})
	chat := chatEnv(t, data, srv, "")
	code, out, stderr := chat("chat", "--agent", agentFile, "--user", "Bob", "--org", "Acme", "--conversation", "conv-ana", "2025")
	want := `quiver: --conversation: "conv-ana" belongs to another user`
	if code != 2 || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, want)
	}
	if seen := srv.Seen(); len(seen) != 0 {
		t.Errorf("the model was called %d times for a refused chat", len(seen))
	}
	if d := cmp.Diff(before, rowCounts(t, data)); d != "" {
		t.Errorf("refused chat wrote rows (-before +after):\n%s", d)
	}
}

// TestCallRefusesConsoleConversation: the web tool console keeps its
// results under console-USER without a conversation record, so the CLI
// may not name such an id (it could otherwise claim someone's console and
// read its results), and nothing is written.
func TestCallRefusesConsoleConversation(t *testing.T) {
	data := t.TempDir()
	seedAnaConversation(t, data)
	before := rowCounts(t, data)
	code, out, stderr := run(t, data, "call", "read_tool_result", "--agent", agentFile, "--user", "Bob", "--org", "Acme",
		"--conversation", "console-ana", "--json", "--args", `{"refs":["res_ana"]}`)
	if code != 2 || out != "" || !strings.Contains(stderr, "web tool console") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming the console", code, out, stderr)
	}
	if d := cmp.Diff(before, rowCounts(t, data)); d != "" {
		t.Errorf("refused call wrote rows (-before +after):\n%s", d)
	}
}
