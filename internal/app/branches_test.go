package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// branchListing is GET .../messages as the branch tests read it.
type branchListing struct {
	Messages []struct {
		TurnID  string `json:"turn_id"`
		Role    string
		Content string
	}
	Turns []struct {
		TurnID   string `json:"turn_id"`
		Index    int
		Count    int
		Siblings []string
	}
}

// said is the conversation's text as the listing shows it: each user
// message and answer, in order.
func (l branchListing) said() []string {
	var out []string
	for _, m := range l.Messages {
		if m.Role == "user" || m.Role == "assistant" {
			out = append(out, m.Content)
		}
	}
	return out
}

// pagers is "index/count" of each turn of the branch shown.
func (l branchListing) pagers() []string {
	var out []string
	for _, t := range l.Turns {
		out = append(out, fmt.Sprintf("%d/%d", t.Index, t.Count))
	}
	return out
}

// TestServeBranches drives regenerate, edit-and-resend and switching
// branches over the API of "quiver serve", on SQLite and PostgreSQL,
// through the real engine and the OpenAI wire: the model gets only the
// branch shown, the listing pages through the siblings, a turn of another
// conversation is refused with nothing stored. (The cap of versions at
// one place is engine's and the store's tests: the API's rate limit
// allows ten messages.)
func TestServeBranches(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			testServeBranches(t, backend)
		})
	}
}

func testServeBranches(t *testing.T, backend string) {
	var mu sync.Mutex
	n := 0
	var heard [][]string // what each model request held of the conversation
	model := llmtest.StartFunc(t, llmtest.OpenAI{}, func(r llm.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		n++
		var h []string
		for _, m := range r.Messages {
			if strings.HasPrefix(m.Text, "msg ") || strings.HasPrefix(m.Text, "reply ") {
				h = append(h, m.Text)
			}
		}
		heard = append(heard, h)
		return llmtest.Reply{Text: []string{fmt.Sprintf("reply %d", n)}}
	})
	lastHeard := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return heard[len(heard)-1]
	}
	vars := map[string]string{"QUIVER_DATA": t.TempDir(), "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model.URL}
	if backend == "postgres" {
		vars["QUIVER_DATABASE_URL"] = pgtest.URL(t)
	}
	a := signIn(t, startServeWith(t, vars))
	a.call("PUT", "/api/agents/brancher", map[string]any{"definition": "name: brancher\nmodel: openai:gpt-4.1\nprompt: You help.\n"}, http.StatusCreated, nil)
	const id, other = "0b1f2a3c-4d5e-4f60-8a7b-9c0d1e2f3a4b", "1c1f2a3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	path := "/api/conversations/" + id
	list := func() branchListing {
		t.Helper()
		var l branchListing
		a.call("GET", path+"/messages", nil, http.StatusOK, &l)
		return l
	}
	send := func(body map[string]any) { a.call("POST", path+"/messages", body, http.StatusOK, nil) }
	check := func(what string, l branchListing, said, pagers []string) {
		t.Helper()
		if d := cmp.Diff(said, l.said()); d != "" {
			t.Errorf("%s: the listing (-want +got):\n%s", what, d)
		}
		if d := cmp.Diff(pagers, l.pagers()); d != "" {
			t.Errorf("%s: the pagers (-want +got):\n%s", what, d)
		}
	}
	heardNow := func(what string, want []string) {
		t.Helper()
		if d := cmp.Diff(want, lastHeard()); d != "" {
			t.Errorf("%s: the model heard (-want +got):\n%s", what, d)
		}
	}

	send(map[string]any{"message": "msg one", "agent": "brancher"})
	send(map[string]any{"message": "msg two"})
	l := list()
	check("two turns", l, []string{"msg one", "reply 1", "msg two", "reply 2"}, []string{"1/1", "1/1"})
	first, second := l.Turns[0].TurnID, l.Turns[1].TurnID

	// Regenerate the second answer: the model hears the first exchange
	// and the message again, not the answer it replaces.
	send(map[string]any{"message": "msg two", "replaces": second})
	heardNow("regenerate", []string{"msg one", "reply 1", "msg two"})
	check("regenerated", list(), []string{"msg one", "reply 1", "msg two", "reply 3"}, []string{"1/1", "2/2"})

	// Edit the first message: a branch of its own, with nothing before it.
	send(map[string]any{"message": "msg uno", "replaces": first})
	heardNow("edit", []string{"msg uno"})
	l = list()
	check("edited", l, []string{"msg uno", "reply 4"}, []string{"2/2"})
	if s := l.Turns[0].Siblings; len(s) != 2 || s[0] != first {
		t.Fatalf("siblings of the edit: %v, want %s first", s, first)
	}

	// Back to the first branch: its latest turn (the regenerated answer)
	// is shown, and a new message continues it.
	var head struct{ Head string }
	a.call("POST", path+"/branch", map[string]any{"turn": first}, http.StatusOK, &head)
	l = list()
	check("switched back", l, []string{"msg one", "reply 1", "msg two", "reply 3"}, []string{"1/2", "2/2"})
	if head.Head != l.Turns[1].TurnID {
		t.Errorf("switch answered head %q, want the branch's latest turn %q", head.Head, l.Turns[1].TurnID)
	}
	send(map[string]any{"message": "msg three"})
	heardNow("continue", []string{"msg one", "reply 1", "msg two", "reply 3", "msg three"})
	check("continued", list(), []string{"msg one", "reply 1", "msg two", "reply 3", "msg three", "reply 5"},
		[]string{"1/2", "2/2", "1/1"})

	// A turn of another conversation, or none: one clear error, nothing
	// stored or sent.
	a.call("POST", "/api/conversations/"+other+"/messages", map[string]any{"message": "msg elsewhere", "agent": "brancher"}, http.StatusOK, nil)
	var elsewhere branchListing
	a.call("GET", "/api/conversations/"+other+"/messages", nil, http.StatusOK, &elsewhere)
	before, sent := list(), len(model.Seen())
	for _, turn := range []string{elsewhere.Turns[0].TurnID, "turn_nope"} {
		code, body := a.do("POST", path+"/messages", map[string]any{"message": "msg bad", "replaces": turn})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "no turn") {
			t.Errorf("replaces %s: %d %s, want 400 naming no turn", turn, code, body)
		}
		code, body = a.do("POST", path+"/branch", map[string]any{"turn": turn})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "no_such_turn") {
			t.Errorf("branch %s: %d %s, want 400 no_such_turn", turn, code, body)
		}
	}
	if d := cmp.Diff(before, list()); d != "" || len(model.Seen()) != sent {
		t.Errorf("refusals changed the conversation (-before +after):\n%s\nor sent %d model requests", d, len(model.Seen())-sent)
	}
}
