package replicatest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/internal/replicatest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestCheckAcksReportsLoss: CheckAcks accepts acknowledgements the store
// holds and reports each kind of loss — a message missing, a message
// with other content at its Seq, a turn missing.
func TestCheckAcksReportsLoss(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seq, err := st.AppendMessage(ctx, "org", store.Message{ConversationID: "c", Role: "user", Content: "kept", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	kept := replicatest.Ack{Kind: "message", Conversation: "c", Seq: seq, Content: "kept"}
	if err := replicatest.CheckAcks(ctx, st, "org", []replicatest.Ack{kept}); err != nil {
		t.Errorf("a stored write: %v", err)
	}
	for name, lost := range map[string]replicatest.Ack{
		"missing message": {Kind: "message", Conversation: "c", Seq: seq + 1, Content: "gone"},
		"other content":   {Kind: "message", Conversation: "c", Seq: seq, Content: "changed"},
		"missing turn":    {Kind: "turn", Turn: "t-gone"},
	} {
		if err := replicatest.CheckAcks(ctx, st, "org", []replicatest.Ack{kept, lost}); err == nil || !strings.Contains(err.Error(), "1 of 2") {
			t.Errorf("%s: %v, want one of two lost", name, err)
		}
	}
}

// TestWireCounterCounts: a statement sent through the counter counts as
// one statement and one round trip once prepared, preparing costs one
// more round trip, a simple query is one of each, and a pipelined batch
// of three prepared statements is three statements in one round trip;
// each execution is counted under its statement's text.
func TestWireCounterCounts(t *testing.T) {
	counter, url := replicatest.StartWireCounter(t, pgtest.URL(t))
	conn := replicatest.Connect(t, url)
	ctx := t.Context()
	step := func(name string, want replicatest.WireCounts, run func() error) {
		t.Helper()
		before := counter.Counts()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := counter.Counts().Sub(before)
		got.Bytes = 0
		if got != want {
			t.Errorf("%s: counted %+v, want %+v", name, got, want)
		}
	}
	step("simple query", replicatest.WireCounts{Statements: 1, RoundTrips: 1}, func() error {
		_, err := conn.Exec(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol)
		return err
	})
	step("first execution", replicatest.WireCounts{Statements: 1, RoundTrips: 2, Parses: 1}, func() error {
		_, err := conn.Exec(ctx, "SELECT $1::int", 1)
		return err
	})
	step("second execution", replicatest.WireCounts{Statements: 1, RoundTrips: 1}, func() error {
		_, err := conn.Exec(ctx, "SELECT $1::int", 2)
		return err
	})
	step("batch", replicatest.WireCounts{Statements: 3, RoundTrips: 1}, func() error {
		var b pgx.Batch
		for i := range 3 {
			b.Queue("SELECT $1::int", i)
		}
		return conn.SendBatch(ctx, &b).Close()
	})
	got := counter.ByStatement()
	for text, want := range map[string]int64{"SELECT 1": 1, "SELECT $1::int": 5} {
		if got[text] != want {
			t.Errorf("%q ran %d times by the counter, want %d (all: %v)", text, got[text], want, got)
		}
	}
}

// TestModelHold: a held request gets no answer until released, and is
// answered as usual once it is; a held request whose client leaves is
// dropped without reaching the fake.
func TestModelHold(t *testing.T) {
	m := replicatest.StartModel(t)
	h := m.Hold(`say "hold me"`)
	answered := make(chan string, 1)
	go func() { answered <- post(t.Context(), m, `say "hold me"`) }()
	<-h.Arrived()
	select {
	case body := <-answered:
		t.Fatalf("answered while held: %q", body)
	default:
	}
	h.Release()
	if body := <-answered; !strings.Contains(body, `say \"hold me\"`) || !strings.Contains(body, "[DONE]") {
		t.Errorf("the released request's answer: %q", body)
	}

	gone := m.Hold("leave me")
	ctx, cancel := context.WithCancel(t.Context())
	left := make(chan string, 1)
	go func() { left <- post(ctx, m, "leave me") }()
	<-gone.Arrived()
	cancel()
	<-left
	if n := m.Requests(); n != 1 {
		t.Errorf("the fake answered %d requests, want 1 (the dropped one never reached it)", n)
	}
}

// post sends a Chat Completions request with one user message, as
// Quiver's OpenAI client does, and returns the answer ("" on error).
func post(ctx context.Context, m *replicatest.Model, text string) string {
	body := `{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":` + quote(text) + `}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.URL+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

// quote is s as a JSON string.
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
