package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// countingStore counts the reads a turn is to make once: the
// conversation, its message list and the organisation's settings.
type countingStore struct {
	store.Store
	mu sync.Mutex
	n  map[string]int
}

func (c *countingStore) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[op]++
}

func (c *countingStore) reads() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	c.n = map[string]int{}
	return out
}

func (c *countingStore) GetConversation(ctx context.Context, orgID, id string) (store.Conversation, error) {
	c.count("GetConversation")
	return c.Store.GetConversation(ctx, orgID, id)
}

func (c *countingStore) ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]store.Message, error) {
	c.count("ListMessages")
	return c.Store.ListMessages(ctx, orgID, conversationID, beforeSeq)
}

func (c *countingStore) GetOrgSettings(ctx context.Context, orgID string) (store.OrgSettings, error) {
	c.count("GetOrgSettings")
	return c.Store.GetOrgSettings(ctx, orgID)
}

// TestHTTPTurnReadsOnce: a turn sent over the HTTP API (a new turn, and
// the answer to a paused one) reads the conversation once, its message
// list once and the organisation's settings once — the engine's collect
// step, which every later stage reads from.
func TestHTTPTurnReadsOnce(t *testing.T) {
	ctx := context.Background()
	model := llmtest.Start(t, llmtest.OpenAI{},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "ask_clarifying_question", map[string]any{"question": "Which unit?"})}},
		llmtest.Reply{Text: []string{"In metres, 12."}},
	)
	sq, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: sq, n: map[string]int{}}
	now := clock.Now()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(sq.CreateOrg(ctx, store.Org{ID: "acme", Name: "Acme", CreatedAt: now}))
	must(sq.CreateUser(ctx, store.User{ID: "ana", OrgID: "acme", DisplayName: "Ana", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}))
	must(sq.PutAgent(ctx, store.StoredAgent{OrgID: "acme", Name: "helper", UpdatedAt: now,
		Definition: []byte("name: helper\nprompt: You help.\nmodel: openai:gpt-test\ncapabilities: {tools: true}\n")}))
	must(sq.PutConversation(ctx, store.Conversation{ID: "conv_1", OrgID: "acme", UserID: "ana", Agent: "helper", CreatedAt: now, UpdatedAt: now}))
	tok, err := (&accounts.Service{Store: sq}).Issue(ctx, store.Credential{Kind: store.CredAPIToken, OrgID: "acme", UserID: "ana", CreatedAt: now})
	must(err)

	vars := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": model.URL}
	env := Env{Getenv: func(k string) string { return vars[k] }}
	env.defaults()
	rt := newRuntime(cs, nil, t.TempDir(), config.Config{}, env)
	defer rt.close()
	srv := httptest.NewServer(rt.apiHandler(rt.newEngine(config.Config{}, nil, true, env), config.Config{}, false, nil, env))
	defer srv.Close()

	send := func(path, body string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		must(err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	cs.reads()
	want := map[string]int{"GetConversation": 1, "ListMessages": 1, "GetOrgSettings": 1}
	if out := send("/api/conversations/conv_1/messages", `{"message":"How long is it?"}`); !strings.Contains(out, "Which unit?") {
		t.Fatalf("the turn did not pause with the question: %s", out)
	}
	if got := cs.reads(); !equalCounts(got, want) {
		t.Errorf("a new turn read %v, want %v", got, want)
	}
	if out := send("/api/conversations/conv_1/answer", `{"answer":"metres"}`); !strings.Contains(out, "In metres") {
		t.Fatalf("the answer did not resume the turn: %s", out)
	}
	if got := cs.reads(); !equalCounts(got, want) {
		t.Errorf("an answer read %v, want %v", got, want)
	}

	// The engine's one read is also the ownership check: another user of
	// the organisation is told the conversation does not exist, for a
	// message and for the inspector alike, and nothing is written.
	must(sq.CreateUser(ctx, store.User{ID: "bo", OrgID: "acme", DisplayName: "Bo", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}))
	boTok, err := (&accounts.Service{Store: sq}).Issue(ctx, store.Credential{Kind: store.CredAPIToken, OrgID: "acme", UserID: "bo", CreatedAt: now})
	must(err)
	before, err := sq.ListMessages(ctx, "acme", "conv_1", 0)
	must(err)
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/api/conversations/conv_1/messages", `{"message":"hi"}`},
		{"GET", "/api/conversations/conv_1/inspect?message=hi", ""},
	} {
		req, _ := http.NewRequest(rq.method, srv.URL+rq.path, strings.NewReader(rq.body))
		req.Header.Set("Authorization", "Bearer "+boTok)
		if rq.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		must(err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "no such conversation") {
			t.Errorf("%s %s by another user: %d %s, want 404 no such conversation", rq.method, rq.path, resp.StatusCode, b)
		}
	}
	after, err := sq.ListMessages(ctx, "acme", "conv_1", 0)
	must(err)
	if len(after) != len(before) {
		t.Errorf("another user's refused turn wrote %d messages", len(after)-len(before))
	}
}

// equalCounts reports whether got holds exactly want's counts.
func equalCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
