package httpapi_test

import (
	"bufio"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
)

// TestRenameConversation: PATCH renames the owner's conversation with a
// trimmed title, refuses an empty, over-long or control-holding one with
// invalid_title, changing nothing, and answers another user's like a
// missing one.
func TestRenameConversation(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.conversation("org_a", "carol", "conv_carol")
	path := "/api/conversations/conv_bob"

	f.clock.Advance(time.Hour)
	var c httpapi.Conversation
	f.ok(f.do(f.bob, "PATCH", path, map[string]any{"title": "  Trip to Huế  "}), http.StatusOK, &c)
	if c.Title != "Trip to Huế" || !c.UpdatedAt.Equal(start) {
		t.Errorf("renamed %+v: want the trimmed title, updated_at unchanged", c)
	}
	for name, title := range map[string]string{
		"empty":     "   ",
		"newline":   "two\nlines",
		"nul":       "nul\x00here",
		"bidi":      "invoice\u202Eexe",
		"too long":  strings.Repeat("ắ", 201),
		"tab":       "a\tb",
		"c1 escape": "x\u009by",
	} {
		wantError(t, f.do(f.bob, "PATCH", path, map[string]any{"title": title}), http.StatusBadRequest, "invalid_title")
		if got, _ := f.st.GetConversation(f.ctx, "org_a", "conv_bob"); got.Title != "Trip to Huế" {
			t.Errorf("%s: a refused title changed the stored one to %q", name, got.Title)
		}
	}
	f.ok(f.do(f.bob, "PATCH", path, map[string]any{"title": strings.Repeat("ắ", 200)}), http.StatusOK, &c)
	wantError(t, f.do(f.bob, "PATCH", path, map[string]any{}), http.StatusBadRequest, "invalid_request")

	// Another user's and a missing one: the same 404, and nothing changes.
	theirs := f.do(f.bob, "PATCH", "/api/conversations/conv_carol", map[string]any{"title": "mine now"})
	missing := f.do(f.bob, "PATCH", "/api/conversations/conv_none", map[string]any{"title": "mine now"})
	wantError(t, theirs, http.StatusNotFound, "not_found")
	if string(theirs.body) != string(missing.body) {
		t.Errorf("another user's conversation answers %s, a missing one %s", theirs.body, missing.body)
	}
	wantError(t, f.do(f.dave, "PATCH", path, map[string]any{"title": "x"}), http.StatusNotFound, "not_found")
	if got, _ := f.st.GetConversation(f.ctx, "org_a", "conv_carol"); got.Title != "" {
		t.Errorf("carol's conversation was renamed %q", got.Title)
	}
}

// TestConversationModel: the models endpoints list what the agent offers
// with whether each is connected; PATCH chooses a connected one (the
// conversation then shows it), refuses one that is not connected or not
// offered with model_not_allowed, and "" goes back to the agent's own.
func TestConversationModel(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	path := "/api/conversations/conv_bob"

	var ms struct {
		Models []httpapi.ModelChoice
		Model  string
	}
	f.ok(f.do(f.bob, "GET", path+"/models", nil), http.StatusOK, &ms)
	want := []httpapi.ModelChoice{
		{Model: "fake:model", Default: true, Connected: true},
		{Model: "fake:big", Connected: true},
		{Model: "fake:gone", Help: `no model is connected: provider "fake" has no key for gone`},
	}
	if d := cmp.Diff(want, ms.Models); d != "" || ms.Model != "fake:model" {
		t.Errorf("models (-want +got):\n%s\nmodel %q", d, ms.Model)
	}

	var c httpapi.Conversation
	f.ok(f.do(f.bob, "PATCH", path, map[string]any{"model": "fake:big"}), http.StatusOK, &c)
	if c.Model != "fake:big" {
		t.Errorf("after choosing: model %q", c.Model)
	}
	f.ok(f.do(f.bob, "GET", path+"/models", nil), http.StatusOK, &ms)
	if ms.Model != "fake:big" {
		t.Errorf("the model in force %q, want fake:big", ms.Model)
	}
	for _, ref := range []string{"fake:gone", "other:model"} {
		wantError(t, f.do(f.bob, "PATCH", path, map[string]any{"model": ref}), http.StatusBadRequest, "model_not_allowed")
	}
	if got, _ := f.st.GetConversation(f.ctx, "org_a", "conv_bob"); got.Model != "fake:big" {
		t.Errorf("a refused model changed the stored one to %q", got.Model)
	}
	f.ok(f.do(f.bob, "PATCH", path, map[string]any{"model": ""}), http.StatusOK, &c)
	if c.Model != "" {
		t.Errorf("after going back: model %q", c.Model)
	}

	f.ok(f.do(f.bob, "GET", "/api/agents/helper/models", nil), http.StatusOK, &ms)
	if len(ms.Models) != 3 || ms.Model != "fake:model" {
		t.Errorf("the agent's models %+v", ms)
	}
	wantError(t, f.do(f.bob, "GET", "/api/agents/nope/models", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.carol, "GET", path+"/models", nil), http.StatusNotFound, "not_found")
}

// TestDeleteConversation: DELETE removes the owner's conversation and
// its messages (204); another user's and a missing one are the same 404
// and keep everything; a running turn's conversation is 409 turn_running
// until the turn ends.
func TestDeleteConversation(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct{ user, id string }{{"bob", "conv_bob"}, {"bob", "conv_kept"}, {"carol", "conv_carol"}} {
		f.conversation("org_a", c.user, c.id)
		_, err := f.st.AppendMessage(f.ctx, "org_a", store.Message{ConversationID: c.id, Role: "user", Content: "hi", CreatedAt: start})
		f.must(err)
	}
	theirs := f.do(f.bob, "DELETE", "/api/conversations/conv_carol", nil)
	missing := f.do(f.bob, "DELETE", "/api/conversations/conv_none", nil)
	wantError(t, theirs, http.StatusNotFound, "not_found")
	if string(theirs.body) != string(missing.body) {
		t.Errorf("another user's conversation answers %s, a missing one %s", theirs.body, missing.body)
	}
	if ms, _ := f.st.ListMessages(f.ctx, "org_a", "conv_carol", 0); len(ms) != 1 {
		t.Errorf("carol's messages after bob's delete: %d", len(ms))
	}

	f.ok(f.do(f.bob, "DELETE", "/api/conversations/conv_bob", nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.bob, "GET", "/api/conversations/conv_bob", nil), http.StatusNotFound, "not_found")
	if ms, _ := f.st.ListMessages(f.ctx, "org_a", "conv_bob", 0); len(ms) != 0 {
		t.Errorf("messages after the delete: %d", len(ms))
	}
	var list struct{ Conversations []httpapi.Conversation }
	f.ok(f.do(f.bob, "GET", "/api/conversations", nil), http.StatusOK, &list)
	if len(list.Conversations) != 1 || list.Conversations[0].ID != "conv_kept" {
		t.Errorf("list after the delete: %+v", list.Conversations)
	}

	resp := f.open(f.bob, "/api/conversations/conv_kept/messages", map[string]any{"message": "block"})
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := readEvent(t, br); err != nil {
		t.Fatal(err)
	}
	wantError(t, f.do(f.bob, "DELETE", "/api/conversations/conv_kept", nil), http.StatusConflict, "turn_running")
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_kept/cancel", nil), http.StatusAccepted, nil)
	if err := <-f.eng.blocked; !errors.Is(err, runs.ErrCancelled) {
		t.Fatalf("the turn ended with %v", err)
	}
	readAll(t, br)
	f.ok(f.do(f.bob, "DELETE", "/api/conversations/conv_kept", nil), http.StatusNoContent, nil)
}

// TestSearchConversations: q finds titles and what the caller wrote,
// ignoring case, never the assistant's words nor others' conversations;
// pages follow next_cursor; a q over 100 characters and a cursor the API
// did not give are refused.
func TestSearchConversations(t *testing.T) {
	f := newFixture(t, nil)
	for i, c := range []struct{ user, id, title, said, answered string }{
		{"bob", "c_budget", "Budget Q3", "numbers please", "Here are the NUMBERS"},
		{"bob", "c_trip", "", "Chuyến đi ĐÀ NẴNG", "Sure, a trip"},
		{"bob", "c_hidden", "", "something", "the budget is fine"},
		{"carol", "c_carol", "Budget of Carol", "budget", ""},
	} {
		at := start.Add(time.Duration(i) * time.Minute)
		f.must(f.st.PutConversation(f.ctx, store.Conversation{ID: c.id, OrgID: "org_a", UserID: c.user, Agent: "helper", Title: c.title, CreatedAt: at, UpdatedAt: at}))
		_, err := f.st.AppendMessages(f.ctx, "org_a", []store.Message{
			{ConversationID: c.id, Role: "user", Content: c.said, CreatedAt: at},
			{ConversationID: c.id, Role: "assistant", Content: c.answered, CreatedAt: at},
		})
		f.must(err)
	}
	type page struct {
		Conversations []httpapi.Conversation
		NextCursor    string `json:"next_cursor"`
	}
	search := func(query string) []string {
		t.Helper()
		var p page
		f.ok(f.do(f.bob, "GET", "/api/conversations?"+query, nil), http.StatusOK, &p)
		ids := []string{}
		for _, c := range p.Conversations {
			ids = append(ids, c.ID)
		}
		return ids
	}
	for q, want := range map[string][]string{
		"budget":  {"c_budget"},
		"NUMBERS": {"c_budget"},
		"đà nẵng": {"c_trip"},
		"trip":    {},
		"  ":      {"c_hidden", "c_trip", "c_budget"},
	} {
		if d := cmp.Diff(want, search("q="+url.QueryEscape(q))); d != "" {
			t.Errorf("q=%q (-want +got):\n%s", q, d)
		}
	}

	var p page
	f.ok(f.do(f.bob, "GET", "/api/conversations?limit=2", nil), http.StatusOK, &p)
	if len(p.Conversations) != 2 || p.NextCursor == "" {
		t.Fatalf("first page %+v", p)
	}
	next := search("limit=2&cursor=" + url.QueryEscape(p.NextCursor))
	if d := cmp.Diff([]string{"c_budget"}, next); d != "" {
		t.Errorf("second page (-want +got):\n%s", d)
	}
	if p.Conversations[0].UpdatedAt.IsZero() {
		t.Error("a listed conversation has no updated_at")
	}
	wantError(t, f.do(f.bob, "GET", "/api/conversations?q="+strings.Repeat("a", 101), nil), http.StatusBadRequest, "invalid_request")
	f.ok(f.do(f.bob, "GET", "/api/conversations?q="+url.QueryEscape(strings.Repeat("ắ", 100)), nil), http.StatusOK, nil)
	wantError(t, f.do(f.bob, "GET", "/api/conversations?cursor=bm90IGEgY3Vyc29y", nil), http.StatusBadRequest, "invalid_cursor")
}

// TestFirstMessageStartsConversation: a message with an agent to an id
// no one holds stores the conversation then, titled after it and with
// the chosen model; without an agent an unknown id stays a
// 404; a short or reserved id, a model without an agent, another user's
// id and another agent than the stored one are refused, storing nothing.
func TestFirstMessageStartsConversation(t *testing.T) {
	f := newFixture(t, nil)
	const id = "2f6c1c7e-8d3a-4f7e-9a51-5b0d6a1c9e44"
	path := "/api/conversations/" + id + "/messages"

	wantError(t, f.do(f.bob, "POST", path, map[string]any{"message": "hello"}), http.StatusNotFound, "not_found")
	if _, err := f.st.GetConversation(f.ctx, "org_a", id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused message stored the conversation: %v", err)
	}
	f.ok(f.do(f.bob, "POST", path, map[string]any{"message": "Plan a trip to Huế\nin May", "agent": "helper", "model": "fake:big"}), http.StatusOK, nil)
	c, err := f.st.GetConversation(f.ctx, "org_a", id)
	f.must(err)
	if c.UserID != "bob" || c.Agent != "helper" || c.Model != "fake:big" || c.Title != "Plan a trip to Huế" {
		t.Errorf("stored %+v", c)
	}
	if call := f.eng.lastCall(t); call.ConversationID != id || call.Message != "Plan a trip to Huế\nin May" {
		t.Errorf("engine call %+v", call)
	}
	// A second message may repeat the agent; another agent is refused.
	f.ok(f.do(f.bob, "POST", path, map[string]any{"message": "and hotels", "agent": "helper"}), http.StatusOK, nil)
	wantError(t, f.do(f.bob, "POST", path, map[string]any{"message": "x", "agent": "only-a"}), http.StatusBadRequest, "invalid_request")

	// Carol cannot enter bob's conversation by naming it with an agent.
	wantError(t, f.do(f.carol, "POST", path, map[string]any{"message": "mine?", "agent": "helper"}), http.StatusNotFound, "not_found")
	for name, body := range map[string]map[string]any{
		"short id":         {"message": "x", "agent": "helper", "id": "conv_1"},
		"console id":       {"message": "x", "agent": "helper", "id": "console-bob-1234567890"},
		"model, no agent":  {"message": "x", "model": "fake:big", "id": "c6a0d3c2-0b1e-4a60-8f3c-0e2d7b9b1f10"},
		"unknown agent":    {"message": "x", "agent": "nope", "id": "d7b1e4d3-1c2f-4b71-9a4d-1f3e8c0c2a21"},
		"model not listed": {"message": "x", "agent": "helper", "model": "other:m", "id": "e8c2f5e4-2d3a-4c82-8b5e-2a4f9d1d3b32"},
		"model too long":   {"message": "x", "agent": "helper", "model": "p:" + strings.Repeat("m", 299), "id": "f9d3a6f5-3e4b-4d93-9c6f-3b5a0e2e4c43"},
		"agent too long":   {"message": "x", "agent": strings.Repeat("a", 65), "id": "a0e4b7a6-4f5c-4ea4-8d7a-4c6b1f3f5d54"},
	} {
		cid := body["id"].(string)
		delete(body, "id")
		r := f.do(f.bob, "POST", "/api/conversations/"+cid+"/messages", body)
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (%s)", name, r.StatusCode, r.body)
		}
		if strings.HasSuffix(name, "too long") && (!strings.Contains(string(r.body), "expected length") || len(r.body) > 300) {
			t.Errorf("%s: %s; want the cap's refusal, not the value quoted back", name, r.body)
		}
		if _, err := f.st.GetConversation(f.ctx, "org_a", cid); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: the conversation was stored: %v", name, err)
		}
	}
}

// TestEmptyMessageRefused: a message or an answer that is only
// whitespace is 400 empty_message before any turn begins, storing
// nothing, even as a conversation's first message.
func TestEmptyMessageRefused(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.pause("org_a", "bob", "conv_bob")
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/answer", map[string]any{"answer": " \t\n "}), http.StatusBadRequest, "empty_message")
	const id = "7c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	wantError(t, f.do(f.bob, "POST", "/api/conversations/"+id+"/messages", map[string]any{"message": "\u00a0 \r\n", "agent": "helper"}), http.StatusBadRequest, "empty_message")
	if _, err := f.st.GetConversation(f.ctx, "org_a", id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an empty first message stored the conversation: %v", err)
	}
	f.eng.mu.Lock()
	defer f.eng.mu.Unlock()
	if len(f.eng.begins) != 0 {
		t.Errorf("the engine began %v for empty messages", f.eng.begins)
	}
}
