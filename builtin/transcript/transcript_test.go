package transcript_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/builtin/transcript"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
)

var scope = tool.Scope{OrgID: "o1", UserID: "u1", ConversationID: "c1", TurnID: "t3"}

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func add(t *testing.T, st store.Messages, org string, m store.Message) {
	t.Helper()
	m.CreatedAt = time.Unix(1, 0)
	if _, err := st.AppendMessage(context.Background(), org, m); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, tl *tool.Tool, args string) (string, error) {
	t.Helper()
	res, err := tl.Run(context.Background(), scope, json.RawMessage(args))
	return res.Content, err
}

func TestReadTranscript(t *testing.T) {
	st := open(t)
	add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t1", Role: "context", Content: "You are talking with Ana."})
	add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t1", Role: "user", Content: "What is the budget?"})
	add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t1", Role: "tool", ToolName: "calculate", Content: "42"})
	add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t1", Role: "assistant", Content: "It is 42."})
	add(t, st, "o1", store.Message{ConversationID: "c2", TurnID: "t9", Role: "user", Content: "other conversation"})
	add(t, st, "o2", store.Message{ConversationID: "c1", TurnID: "t8", Role: "user", Content: "other org"})
	add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t3", Role: "user", Content: "current turn"})
	got, err := run(t, transcript.Tool(st), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "#2 user: What is the budget?\n#3 tool calculate: 42\n#4 assistant: It is 42."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLimits(t *testing.T) {
	st := open(t)
	for i := range 10 {
		add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t1", Role: "user", Content: fmt.Sprintf("%d:%s", i, strings.Repeat("x", 2990))})
	}
	tl := transcript.Tool(st)
	got, err := run(t, tl, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	// Default 6,000 characters: the newest message fits, with a note on how to page back.
	if n := len([]rune(got)); n > transcript.DefaultMaxChars+100 || !strings.Contains(got, "9:xxx") || strings.Contains(got, "7:xxx") {
		t.Errorf("default read: %d characters, %q…", n, got[:80])
	}
	if !strings.HasPrefix(got, "[Older messages left out: call again with before=") {
		t.Errorf("no paging note: %q", got[:80])
	}
	got, err = run(t, tl, `{"maxChars":20000}`)
	if err != nil || !strings.Contains(got, "4:xxx") || strings.Contains(got, "2:xxx") {
		t.Errorf("maxChars 20000: err %v, len %d", err, len(got))
	}
	got, err = run(t, tl, `{"maxChars":20000,"before":3}`)
	if err != nil || !strings.HasPrefix(got, "#1 user: 0:") || strings.Contains(got, "2:xxx") {
		t.Errorf("before=3: err %v, %q", err, got[len(got)-60:])
	}
	if _, err := run(t, tl, `{"maxChars":20001}`); err == nil || !strings.Contains(err.Error(), "maxChars must be between 1 and 20000") {
		t.Errorf("maxChars 20001: err = %v", err)
	}
}

// TestLongMessageSaysItIsCut: a message longer than maxChars is shown in
// part, and says so.
func TestLongMessageSaysItIsCut(t *testing.T) {
	st := open(t)
	add(t, st, "o1", store.Message{ConversationID: "c1", TurnID: "t1", Role: "user", Content: strings.Repeat("y", 3000)})
	got, err := run(t, transcript.Tool(st), `{"maxChars":1000}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "#1 user: " + strings.Repeat("y", 991) + "\n[Cut: this message has 3009 characters; only the first 1000 are shown.]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEmpty(t *testing.T) {
	got, err := run(t, transcript.Tool(open(t)), `{}`)
	if err != nil || got != "No earlier messages in this conversation." {
		t.Errorf("got %q, %v", got, err)
	}
}

// TestReadTranscriptBranch: a turn beside a replaced one (a regenerated
// answer) reads the branch shown only, never the replaced turn.
func TestReadTranscriptBranch(t *testing.T) {
	st := open(t)
	for _, tr := range []struct{ id, parent, text string }{{"t1", "", "first"}, {"t2", "t1", "replaced"}, {"t3", "t1", "current turn"}} {
		c := store.Conversation{ID: "c1", OrgID: "o1", UserID: "u1", Agent: "a"}
		_, err := st.WriteTurn(context.Background(), "o1", store.TurnWrite{Claim: &c, Head: true,
			Turn:     &store.Turn{ID: tr.id, OrgID: "o1", UserID: "u1", ConversationID: "c1", ParentID: tr.parent, Status: store.TurnDone},
			Messages: []store.Message{{ConversationID: "c1", TurnID: tr.id, Role: "user", Content: tr.text, CreatedAt: time.Unix(1, 0)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := run(t, transcript.Tool(st), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "#1 user: first"; got != want {
		t.Errorf("read %q, want %q", got, want)
	}
}
