package webui_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The stub's conversations: listed most recently updated first, searched
// by title and by what the person wrote (GET /api/conversations?q=),
// renamed (PATCH) and deleted (DELETE, 409 while a turn runs), in the
// shapes httpapi answers.

// stubConversation is one conversation of the stub.
type stubConversation struct {
	ID, Agent, Title string
	// Model is the conversation's chosen model; "" runs on the agent's.
	Model            string
	Created, Updated time.Time
	Running          bool
	Said             []string // the person's messages
}

func (c *stubConversation) view() map[string]any {
	v := map[string]any{"id": c.ID, "agent": c.Agent, "title": c.Title, "model": c.Model, "running": c.Running,
		"created_at": c.Created.Format(time.RFC3339Nano), "updated_at": c.Updated.Format(time.RFC3339Nano)}
	if p := parentOf(c.ID); p != nil {
		v["parent"] = p
	}
	return v
}

// addDated adds conversations updated today, yesterday, 3, 12 and 70 days
// ago (at noon in zone, the browser's, so that each falls in its group
// whatever the hour), and one whose turn is running.
func (s *stubAPI) addDated(zone *time.Location) {
	now := time.Now().In(zone)
	noon := func(days int) time.Time {
		return time.Date(now.Year(), now.Month(), now.Day()-days, 12, 0, 0, 0, zone)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range []*stubConversation{
		{ID: "c_today", Title: "Quarterly budget", Updated: now, Said: []string{"Draft the Q3 budget"}},
		{ID: "c_yesterday", Title: "Trip to Hanoi", Updated: noon(1), Said: []string{"Plan three days in Hanoi"}},
		{ID: "c_week", Title: "Release notes draft", Updated: noon(3), Said: []string{"Summarise the changelog for the release"}},
		{ID: "c_month", Title: "Hiring plan", Updated: noon(12), Said: []string{"Which roles do we open in the autumn?"}},
		{ID: "c_old", Title: "Old notes", Updated: noon(70), Said: []string{"Keep these notes"}},
		{ID: "c_busy", Title: "Long report", Updated: noon(2), Running: true, Said: []string{"Write the annual report"}},
	} {
		c.Agent, c.Created = "assistant", c.Updated.Add(-time.Hour)
		s.convs[c.ID] = c
	}
}

func (s *stubAPI) listConversations(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	s.mu.Lock()
	var list []*stubConversation
	for _, c := range s.convs {
		if q == "" || strings.Contains(strings.ToLower(c.Title), q) ||
			slices.ContainsFunc(c.Said, func(m string) bool { return strings.Contains(strings.ToLower(m), q) }) {
			list = append(list, c)
		}
	}
	slices.SortFunc(list, func(a, b *stubConversation) int { return b.Updated.Compare(a.Updated) })
	views := []any{}
	for _, c := range list {
		views = append(views, c.view())
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"conversations": views})
}

// createConversation makes conv_2, conv_3, … for a known agent.
func (s *stubAPI) createConversation(w http.ResponseWriter, r *http.Request) {
	agent := str(body(r), "agent")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.agents[agent]; !ok {
		writeErr(w, http.StatusBadRequest, "unknown_agent", fmt.Sprintf("no agent named %q", agent))
		return
	}
	s.created++
	now := time.Now().UTC()
	c := &stubConversation{ID: fmt.Sprintf("conv_%d", s.created+1), Agent: agent, Created: now, Updated: now}
	s.convs[c.ID] = c
	writeJSON(w, http.StatusCreated, c.view())
}

// clientID is what httpapi takes as a conversation id of the client's
// making.
var clientID = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

// start stores the conversation a first message names (b's agent and
// model), as httpapi's POST …/messages does for an id it does not hold;
// false when it answered with a refusal. A known id is left as it is.
func (s *stubAPI) start(w http.ResponseWriter, id string, b map[string]any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.convs[id]; ok {
		return true
	}
	agent, model := str(b, "agent"), str(b, "model")
	switch {
	case agent == "":
		writeErr(w, http.StatusNotFound, "not_found", "no such conversation")
	case !clientID.MatchString(id) || strings.HasPrefix(id, "console-"):
		writeErr(w, http.StatusBadRequest, "invalid_conversation_id", "id: 16 to 64 letters, digits, - or _")
	case s.agents[agent] == "":
		writeErr(w, http.StatusBadRequest, "unknown_agent", fmt.Sprintf("no agent named %q", agent))
	case model != "" && !s.offers(agent, model):
		writeErr(w, http.StatusBadRequest, "model_not_allowed", fmt.Sprintf("model %q is not one the agent %q offers", model, agent))
	default:
		now := time.Now().UTC()
		s.convs[id] = &stubConversation{ID: id, Agent: agent, Model: model, Created: now, Updated: now}
		return true
	}
	return false
}

// conversationOf returns the conversation of the request's path, or
// answers 404.
func (s *stubAPI) conversationOf(w http.ResponseWriter, r *http.Request) *stubConversation {
	c, ok := s.convs[r.PathValue("id")]
	if !ok {
		writeErr(w, http.StatusNotFound, "not_found", "no such conversation")
	}
	return c
}

func (s *stubAPI) getConversation(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.conversationOf(w, r); c != nil {
		writeJSON(w, http.StatusOK, c.view())
	}
}

// patchConversation renames: the title is trimmed, and must be 1 to 200
// characters.
func (s *stubAPI) patchConversation(w http.ResponseWriter, r *http.Request) {
	if s.noManage.Load() {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conversationOf(w, r)
	if c == nil {
		return
	}
	if m, ok := body(r)["model"].(string); ok {
		if !s.offers(c.Agent, m) {
			writeErr(w, http.StatusBadRequest, "model_not_allowed", fmt.Sprintf("model %q is not one the agent %q offers", m, c.Agent))
			return
		}
		c.Model = m
		if _, renamed := body(r)["title"]; !renamed {
			writeJSON(w, http.StatusOK, c.view())
			return
		}
	}
	title := strings.TrimSpace(str(body(r), "title"))
	if title == "" || len([]rune(title)) > 200 {
		writeErr(w, http.StatusBadRequest, "invalid_request", "title: 1 to 200 characters")
		return
	}
	c.Title = title
	writeJSON(w, http.StatusOK, c.view())
}

func (s *stubAPI) deleteConversation(w http.ResponseWriter, r *http.Request) {
	if s.noManage.Load() {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conversationOf(w, r)
	if c == nil {
		return
	}
	if c.Running {
		writeErr(w, http.StatusConflict, "turn_running", "a turn of this conversation is running; stop it first")
		return
	}
	delete(s.convs, c.ID)
	w.WriteHeader(http.StatusNoContent)
}

// said records a message sent to conversation id (its title, when it has
// none, is the message, as httpapi names it); false for no conversation.
func (s *stubAPI) said(id, msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return false
	}
	c.Said = append(c.Said, msg)
	c.Updated = time.Now().UTC()
	if c.Title == "" {
		c.Title = msg
	}
	return true
}

// hold makes turns wait at point until the returned release is called.
func (s *stubAPI) hold(point string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.holds[point] = ch
	s.mu.Unlock()
	return func() { close(ch) }
}

// wait waits at point when it is held; false when the request ended.
func (s *stubAPI) wait(ctx context.Context, point string) bool {
	s.mu.Lock()
	ch := s.holds[point]
	s.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// longLines is how many lines longTurn streams before its hold and after.
const longLines = 60

// longTurn streams a long answer, a paragraph per event: longLines
// paragraphs, the hold "long", longLines more, then "The end."
func (s *stubAPI) longTurn(ctx context.Context, e *sse) {
	for i := 1; i <= 2*longLines; i++ {
		if i == longLines+1 && !s.wait(ctx, "long") {
			return
		}
		e.send(map[string]any{"type": "text", "text": fmt.Sprintf("Line %d of the story.\n\n", i)})
	}
	e.send(map[string]any{"type": "text", "text": "The end."})
	e.send(map[string]any{"type": "done", "stop": "answer"})
}

// toolsTurn holds before any event ("start": the response has not even
// begun), then calls docs__search_docs and holds while it runs ("tool"),
// then a call the loop refuses, and answers.
func (s *stubAPI) toolsTurn(ctx context.Context, w http.ResponseWriter) {
	if !s.wait(ctx, "start") {
		return
	}
	e := newSSE(w)
	e.send(map[string]any{"type": "tool_call", "call": map[string]any{"id": "call_s", "name": "docs__search_docs",
		"args": map[string]any{"query": "rate limits", "limit": 5}}})
	if !s.wait(ctx, "tool") {
		return
	}
	e.send(map[string]any{"type": "tool_result", "result": map[string]any{"call_id": "call_s", "name": "docs__search_docs",
		"content": "1. Rate limits — docs/limits.md"}})
	e.send(map[string]any{"type": "tool_call", "call": map[string]any{"id": "call_r", "name": "web_search", "args": map[string]any{"q": "rate limits"}}})
	e.send(map[string]any{"type": "tool_result", "result": map[string]any{"call_id": "call_r", "name": "web_search", "is_error": true,
		"content": "Not run: this turn has used its limit of 8 tool calls; answer with what you have."}})
	e.send(map[string]any{"type": "text", "text": "Found it: see docs/limits.md."})
	e.send(map[string]any{"type": "done", "stop": "answer"})
}

// upload answers an attachment upload, after the hold "upload" when it
// is held, as stored and ready.
func (s *stubAPI) upload(w http.ResponseWriter, r *http.Request) {
	f, h, err := r.FormFile("file")
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid_request", "the body has no file in the field \"file\"")
		return
	}
	f.Close()
	if !s.wait(r.Context(), "upload") {
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": "att_" + h.Filename, "name": h.Filename, "media_type": "text/plain",
		"size": h.Size, "status": "ready", "created_at": time.Now().UTC().Format(time.RFC3339Nano)})
}
