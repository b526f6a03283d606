package webui_test

import (
	"context"
	"net/http"
	"time"
)

// The stub's message marks (marks.js): a conversation, stubMarked, whose
// stored messages carry reactions, a pin, an edit and a thread; a thread
// of it, stubThread, linking back; their pins; and msgMarks, a turn whose
// message tools react, pin, edit and start a thread as it runs.

const (
	stubMarked = "conv_marked"
	stubThread = "conv_thread"
	msgMarks   = "Pin the plan"
)

// addMarked stores the two conversations and their transcripts.
func (s *stubAPI) addMarked() {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC)
	s.convs[stubMarked] = &stubConversation{ID: stubMarked, Agent: "assistant", Title: "Trip plans", Created: at, Updated: at, Said: []string{"Plan the trip"}}
	s.convs[stubThread] = &stubConversation{ID: stubThread, Agent: "assistant", Title: "Flights", Created: at, Updated: at}
	msg := func(seq int, role, content string, marks map[string]any) map[string]any {
		m := map[string]any{"seq": seq, "turn_id": "turn_m", "role": role, "content": content, "created_at": at.Format(time.RFC3339)}
		for k, v := range marks {
			m[k] = v
		}
		return m
	}
	if s.stored == nil {
		s.stored = map[string][]map[string]any{}
	}
	s.stored[stubMarked] = []map[string]any{
		msg(1, "user", "Plan the trip", map[string]any{"reactions": []any{map[string]any{"emoji": "👍", "count": 2, "agent": true, "mine": true}}}),
		msg(2, "assistant", "Fly on Tuesday.", map[string]any{"pinned": true, "edited": true, "thread": stubThread}),
		msg(3, "assistant", "", map[string]any{"deleted": true}),
		msg(4, "user", "And the hotel?", nil),
		msg(5, "assistant", "The one by the lake.", nil),
	}
	s.stored[stubThread] = []map[string]any{msg(1, "assistant", "Let's pick the flight here.", nil)}
}

// routeMarks serves the pins and a thread's parent.
func (s *stubAPI) routeMarks(api func(string, http.HandlerFunc)) {
	api("GET /api/conversations/{id}/pins", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var pins []any
		for _, m := range s.stored[r.PathValue("id")] {
			if m["pinned"] == true {
				pins = append(pins, m)
			}
		}
		if pins == nil {
			pins = []any{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"messages": pins})
	})
}

// parentOf is the parent a conversation's view carries.
func parentOf(id string) map[string]any {
	if id != stubThread {
		return nil
	}
	return map[string]any{"conversation_id": stubMarked, "title": "Trip plans", "message_seq": 2}
}

// marksTurn is msgMarks' turn in stubMarked: the agent reacts to the
// person's second message, pins it, edits its last reply, starts a
// thread from it, and answers. Each change is pinned in the stored
// transcript too, as the real store would be.
func (s *stubAPI) marksTurn(_ context.Context, e *sse) {
	s.mu.Lock()
	for _, m := range s.stored[stubMarked] {
		if m["seq"] == 4 {
			m["pinned"] = true
		}
	}
	s.mu.Unlock()
	change := func(c map[string]any) {
		c["conversation"] = stubMarked
		e.send(map[string]any{"type": "messages", "messages": []any{c}})
	}
	e.send(map[string]any{"type": "tool_call", "call": map[string]any{"id": "m1", "name": "interact_with_message", "args": map[string]any{"message_id": "4", "action": "react", "emoji": "🎉"}}})
	e.send(map[string]any{"type": "tool_result", "result": map[string]any{"call_id": "m1", "name": "interact_with_message", "content": "Reacted to message 4 with 🎉."}})
	change(map[string]any{"action": "react", "message": "4", "emoji": "🎉"})
	change(map[string]any{"action": "pin", "message": "4"})
	change(map[string]any{"action": "edit", "message": "5", "text": "The one by the lake, with breakfast."})
	change(map[string]any{"action": "thread", "message": "5", "thread": stubThread, "text": "Hotel"})
	change(map[string]any{"action": "post", "message": "1", "text": "elsewhere"}) // another conversation's: ignored
	e.send(map[string]any{"type": "text", "text": "Done: pinned and noted."})
	e.send(map[string]any{"type": "done", "stop": "answer"})
}
