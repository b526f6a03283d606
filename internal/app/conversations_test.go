package app_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// call sends one API request and checks its status, decoding the body
// into v unless v is nil.
func (a *apiClient) call(method, path string, body any, status int, v any) {
	a.t.Helper()
	code, b := a.do(method, path, body)
	if code != status {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, status)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			a.t.Fatalf("%s: %v", b, err)
		}
	}
}

// sentModel is the "model" field of the fake's nth request, as the
// provider received it on the wire.
func sentModel(t *testing.T, model *llmtest.Server, n int) string {
	t.Helper()
	seen := model.Seen()
	if len(seen) <= n {
		t.Fatalf("the model got %d requests, want at least %d", len(seen), n+1)
	}
	var wire struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(seen[n].Raw, &wire); err != nil {
		t.Fatal(err)
	}
	return wire.Model
}

// TestServeConversationLifecycle drives "quiver serve" over its API as
// the web UI does, through the real engine, store and OpenAI wire: the
// first message starts a conversation on a model picked from the agent's
// list (the provider is asked for that model), a PATCH changes the model
// of the next turn, a model the organisation has not connected is
// refused, an empty message is refused, search finds the conversation by
// what the person wrote, and a delete removes it.
func TestServeConversationLifecycle(t *testing.T) {
	model := llmtest.StartFunc(t, llmtest.OpenAI{}, func(llm.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"Noted."}}
	})
	s := startServe(t, t.TempDir(), model)
	a := signIn(t, s)
	def := "name: picker\nmodel: openai:gpt-4.1-mini\nmodels: [openai:gpt-4.1, anthropic:claude-sonnet-4-5]\nprompt: You help.\n"
	a.call("PUT", "/api/agents/picker", map[string]any{"definition": def}, http.StatusCreated, nil)

	var choices struct {
		Models []struct {
			Model     string
			Default   bool
			Connected bool
			Help      string
		}
		Model string
	}
	a.call("GET", "/api/agents/picker/models", nil, http.StatusOK, &choices)
	if len(choices.Models) != 3 || !choices.Models[0].Default || !choices.Models[1].Connected ||
		choices.Models[2].Connected || !strings.Contains(choices.Models[2].Help, "ANTHROPIC_API_KEY") {
		t.Fatalf("the agent's models: %+v", choices)
	}

	const id = "6b1f2a3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	path := "/api/conversations/" + id
	a.call("POST", path+"/messages", map[string]any{"message": "Remember the blue kumquat", "agent": "picker", "model": "openai:gpt-4.1"}, http.StatusOK, nil)
	if got := sentModel(t, model, 0); got != "gpt-4.1" {
		t.Errorf("the first turn asked the provider for %q, want the chosen gpt-4.1", got)
	}
	a.call("PATCH", path, map[string]any{"model": ""}, http.StatusOK, nil)
	a.call("POST", path+"/messages", map[string]any{"message": "And the red one"}, http.StatusOK, nil)
	if got := sentModel(t, model, 1); got != "gpt-4.1-mini" {
		t.Errorf("after going back to the agent's model the turn asked for %q, want gpt-4.1-mini", got)
	}
	a.call("PATCH", path, map[string]any{"model": "anthropic:claude-sonnet-4-5"}, http.StatusBadRequest, nil)
	a.call("POST", path+"/messages", map[string]any{"message": " \n\t "}, http.StatusBadRequest, nil)
	if n := len(model.Seen()); n != 2 {
		t.Errorf("the provider got %d requests, want 2 (the refused ones sent nothing)", n)
	}

	var list struct {
		Conversations []struct {
			ID, Title, Model string
		}
	}
	for q, want := range map[string]int{"KUMQUAT": 1, "noted": 0} {
		a.call("GET", "/api/conversations?q="+url.QueryEscape(q), nil, http.StatusOK, &list)
		if len(list.Conversations) != want {
			t.Errorf("search %q: %+v, want %d", q, list.Conversations, want)
		}
	}
	a.call("GET", "/api/conversations", nil, http.StatusOK, &list)
	if c := list.Conversations; len(c) != 1 || c[0].ID != id || c[0].Title != "Remember the blue kumquat" {
		t.Errorf("listed: %+v", c)
	}
	a.call("DELETE", path, nil, http.StatusNoContent, nil)
	a.call("GET", path, nil, http.StatusNotFound, nil)
	a.call("GET", "/api/conversations?q=kumquat", nil, http.StatusOK, &list)
	if len(list.Conversations) != 0 {
		t.Errorf("search after the delete: %+v", list.Conversations)
	}
}
