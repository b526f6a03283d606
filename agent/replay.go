package agent

import (
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

// Replay is a turn's model calls as they were sent — or, for a turn not
// run yet, its first call as it would be sent — for the inspector: the
// model's view of the conversation once, and each call as a part of it,
// so that a turn of many calls over a long history costs its history
// once, not once per call.
type Replay struct {
	// Messages are the model's view as the turn's last call saw it: the
	// earlier history (at most Config.MaxHistory stored messages, as
	// buildHistory keeps them), then the turn's own messages — its
	// context message, the user's message, each reply with its tool
	// calls and their results — up to its last call. Never nil.
	Messages []llm.Message `json:"messages"`
	// TurnStart is the index in Messages of the turn's first message.
	TurnStart int `json:"turn_start"`
	// Calls are the turn's model calls, in order; at least one.
	Calls []Call `json:"calls"`
	// Omitted counts the earliest messages of the view that no call sent
	// (every call cut them, behind its marker): they are left out of
	// Messages, so a replay is never larger than what its calls sent
	// plus the turn's own messages.
	Omitted int `json:"omitted"`
}

// Call is one model call of a turn: it sent, after the system prompt and
// the tool definitions, Messages[i] for each i of Kept, then Cut.Marker
// when it is not empty, then Messages[From:End].
type Call struct {
	// Kept are the turn's own user messages sent before the marker when
	// the history was cut (they are never cut); empty otherwise.
	Kept []int `json:"kept"`
	// From and End bound the messages sent after the marker.
	From int `json:"from"`
	End  int `json:"end"`
	// Cut is how the call fitted the model's context window.
	Cut Cut `json:"cut"`
}

// Replay rebuilds the model calls of s's turn from s.History, the way a
// run makes them (see fitter): the turn's stored messages when s.History
// holds them (a stored turn), else s.Request.Context and s.Message (a
// turn not run yet, one call). calls is how many model calls the turn
// made (store.Turn.Steps): each is cut just before one of the turn's
// replies; 0 or fewer counts as one (a draft, or a turn stored before
// steps were counted), and a call with no reply after it (a draft, a
// turn whose call failed) sent the whole view. A call the provider refused as too long
// and that was retried with a tighter cut is shown with the first cut.
// Nothing is read or written.
func (r *Runner) Replay(s Start, calls int) Replay {
	msgs := turnMessages(s)
	h := buildHistory(msgs, r.cfg.MaxHistory, s.Facts.TurnID)
	ends := replyEnds(h, calls)
	win := r.window(s.Facts.Model.Provider + ":" + s.Facts.Model.Name)
	fixed := fixedTokens(s.Request.System, s.Request.Tools)
	out := Replay{Messages: h.msgs, TurnStart: h.turnStart, Calls: make([]Call, 0, len(ends))}
	if out.Messages == nil {
		out.Messages = []llm.Message{}
	}
	prev := 0
	for _, end := range ends {
		part := h
		part.msgs = h.msgs[:end]
		_, cut, from := part.fit(fixed, win.Budget(), prev)
		cut.Window = win
		out.Calls = append(out.Calls, h.call(cut, from, end))
		prev = from
	}
	out.omitUnsent()
	return out
}

// omitUnsent drops from Messages the earliest messages no call sent, and
// moves the calls' indices with them. The turn's own messages stay.
func (r *Replay) omitUnsent() {
	lo := r.TurnStart
	for _, c := range r.Calls {
		if c.Cut.Marker == "" {
			return // a call sent everything from the first message
		}
		lo = min(lo, c.From)
	}
	if lo <= 0 {
		return
	}
	r.Messages, r.TurnStart, r.Omitted = r.Messages[lo:], r.TurnStart-lo, lo
	for i := range r.Calls {
		c := &r.Calls[i]
		c.From, c.End = c.From-lo, c.End-lo
		for k := range c.Kept {
			c.Kept[k] -= lo
		}
	}
}

// turnMessages are the stored messages a replay of s's turn reads: the
// conversation up to the turn's last message, or, when s.History does
// not hold the turn, all of it followed by the turn's context message
// and message as s would send them.
func turnMessages(s Start) []store.Message {
	last := -1
	for i, m := range s.History {
		if m.TurnID == s.Facts.TurnID && s.Facts.TurnID != "" {
			last = i
		}
	}
	if last >= 0 {
		return s.History[:last+1]
	}
	msgs := append([]store.Message(nil), s.History...)
	return append(msgs,
		store.Message{Role: roleContext, Content: s.Request.Context, TurnID: s.Facts.TurnID},
		store.Message{Role: string(llm.User), Content: s.Message, TurnID: s.Facts.TurnID})
}

// replyEnds are where the replies to the turn's first calls calls (at
// least one) begin in h: each call sent everything before its reply.
// With no reply to cut at, the one call sent all of h.
func replyEnds(h history, calls int) []int {
	calls = max(calls, 1)
	var ends []int
	for i := h.turnStart; i < len(h.msgs) && len(ends) < calls; i++ {
		if h.msgs[i].Role == llm.Assistant {
			ends = append(ends, i)
		}
	}
	if len(ends) == 0 {
		return []int{len(h.msgs)}
	}
	return ends
}

// call describes a fitted call of h.msgs[:end] whose oldest message kept
// after the marker is from (history.fit's): without a cut, everything up
// to end; with one, the turn's user messages before from (the units fit
// never cuts), the marker, then h.msgs[from:end].
func (h history) call(cut Cut, from, end int) Call {
	if cut.Marker == "" {
		return Call{Kept: []int{}, From: 0, End: end, Cut: cut}
	}
	c := Call{Kept: []int{}, From: from, End: end, Cut: cut}
	for i := h.turnStart; i < from && i < end; i++ {
		if h.msgs[i].Role == llm.User {
			c.Kept = append(c.Kept, i)
		}
	}
	return c
}
