package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"strings"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

// Stored message roles beyond the llm ones.
const (
	roleContext  = "context"
	roleToolCall = "tool_call"
)

// toLLMSeqs rebuilds the model's view of a conversation from its stored
// messages, with, for each message of the view, the Seq of the stored
// message it starts with (an answer made up for a dangling call takes its
// result's or its call's). Context messages of other turns are dropped
// (the current turn's context message says who and when); tool calls join
// the assistant message before them; consecutive tool results join one
// tool message; a call left without a result (a crash between steps) is
// answered "interrupted", so no call is sent dangling.
func toLLMSeqs(msgs []store.Message, turnID string) ([]llm.Message, []int64) {
	var out []llm.Message
	var seqs []int64
	for _, m := range msgs {
		n := len(out)
		if out = addMessage(out, m, turnID); len(out) > n {
			seqs = append(seqs, m.Seq)
		}
	}
	return answerDangling(out, seqs)
}

// addMessage adds one stored message to the model's view.
func addMessage(out []llm.Message, m store.Message, turnID string) []llm.Message {
	switch m.Role {
	case roleContext:
		if m.TurnID == turnID {
			out = append(out, llm.Message{Role: llm.User, Text: m.Content})
		}
	case string(llm.User):
		out = append(out, llm.Message{Role: llm.User, Text: m.Content})
	case string(llm.Assistant):
		out = append(out, llm.Message{Role: llm.Assistant, Text: m.Content})
	case roleToolCall:
		out = appendCall(out, llm.ToolCall{ID: m.ToolCallID, Name: m.ToolName, Args: args(m.Content)})
	case string(llm.Tool):
		out = appendResult(out, llm.ToolResult{CallID: m.ToolCallID, Name: m.ToolName, Content: m.Content, IsError: m.IsError})
	}
	return out
}

func args(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return json.RawMessage("{}")
}

func appendCall(out []llm.Message, c llm.ToolCall) []llm.Message {
	if n := len(out); n > 0 && out[n-1].Role == llm.Assistant {
		out[n-1].ToolCalls = append(out[n-1].ToolCalls, c)
		return out
	}
	return append(out, llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{c}})
}

func appendResult(out []llm.Message, r llm.ToolResult) []llm.Message {
	if n := len(out); n > 0 && out[n-1].Role == llm.Tool {
		out[n-1].Results = append(out[n-1].Results, r)
		return out
	}
	return append(out, llm.Message{Role: llm.Tool, Results: []llm.ToolResult{r}})
}

// answerDangling makes every assistant tool call answered by the tool
// message right after it, in call order, and drops results that answer no
// call. seqs run beside in and are returned beside the result.
func answerDangling(in []llm.Message, seqs []int64) ([]llm.Message, []int64) {
	var out []llm.Message
	var outSeqs []int64
	for i := 0; i < len(in); i++ {
		m := in[i]
		if m.Role == llm.Tool {
			continue // orphan results: their calls were answered below or never made
		}
		out, outSeqs = append(out, m), append(outSeqs, seqs[i])
		if m.Role != llm.Assistant || len(m.ToolCalls) == 0 {
			continue
		}
		var got map[string]llm.ToolResult
		seq := seqs[i]
		if i+1 < len(in) && in[i+1].Role == llm.Tool {
			got = byCall(in[i+1].Results)
			i++
			seq = seqs[i]
		}
		out = append(out, llm.Message{Role: llm.Tool, Results: matchResults(m.ToolCalls, got)})
		outSeqs = append(outSeqs, seq)
	}
	return out, outSeqs
}

func byCall(rs []llm.ToolResult) map[string]llm.ToolResult {
	m := make(map[string]llm.ToolResult, len(rs))
	for _, r := range rs {
		m[r.CallID] = r
	}
	return m
}

func matchResults(calls []llm.ToolCall, got map[string]llm.ToolResult) []llm.ToolResult {
	rs := make([]llm.ToolResult, len(calls))
	for i, c := range calls {
		r, ok := got[c.ID]
		if !ok {
			r = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "interrupted: this call was never answered", IsError: true}
		}
		rs[i] = r
	}
	return rs
}

// trimHistory keeps at most max messages, cutting only before a user
// message so no tool call loses its result.
func trimHistory(msgs []store.Message, max int) []store.Message {
	if len(msgs) <= max {
		return msgs
	}
	cut := len(msgs) - max
	for cut < len(msgs) && msgs[cut].Role != string(llm.User) {
		cut++
	}
	return msgs[cut:]
}

// Context windows. A model call's history is cut to fit the model's
// context window (see fitter): the oldest parts go first, whole, and a
// marker message says what was left out.

// DefaultWindow is the context window of a model Config.Windows does not
// know (or of every model, when Config.Windows is nil).
var DefaultWindow = Window{Tokens: 128_000}

// Window is a model's context window.
type Window struct {
	// Tokens is the model's context window, in tokens: what one request
	// may hold, the reply included.
	Tokens int `json:"tokens"`
	// Reserve is the part of Tokens kept free for the reply; zero means
	// DefaultReserve(Tokens).
	Reserve int `json:"reserve"`
}

// DefaultReserve is the reply's share of a window of tokens when none is
// configured: a quarter of the window, at most 16,384 tokens.
func DefaultReserve(tokens int) int { return min(tokens/4, 16_384) }

// withDefaults fills a zero Tokens from DefaultWindow and a zero Reserve
// from DefaultReserve.
func (w Window) withDefaults() Window {
	if w.Tokens <= 0 {
		w.Tokens = DefaultWindow.Tokens
	}
	if w.Reserve <= 0 || w.Reserve >= w.Tokens {
		w.Reserve = DefaultReserve(w.Tokens)
	}
	return w
}

// Budget is how many tokens the request itself may take: the window less
// the reply's reserve.
func (w Window) Budget() int {
	w = w.withDefaults()
	return w.Tokens - w.Reserve
}

// The token estimate: bytes / 4, rounded up per message, over what a
// request carries — the system prompt, each tool's name, description and
// schema, each message's text, calls and results — with partOverhead bytes
// for each message, call, result and tool (role, IDs, framing), and
// imageTokens per image. It is cheap and deterministic, not a tokenizer:
// English prose and JSON run near 4 bytes a token, some text (code, CJK)
// nearer 3, which the reserve and the retry on a context-length error
// absorb.
const (
	bytesPerToken = 4
	partOverhead  = 16
	imageTokens   = 1600
	// markerTokens is the allowance made for the marker message when
	// cutting; the marker's own estimate is below it.
	markerTokens = 96
)

// EstimateTokens is the token estimate of req's input (see the constants
// above).
func EstimateTokens(req llm.Request) int {
	n := fixedTokens(req.System, req.Tools)
	for _, m := range req.Messages {
		n += messageTokens(m)
	}
	return n
}

// fixedTokens estimates the part of a request no cut touches: the system
// prompt and the tool declarations.
func fixedTokens(system string, tools []llm.ToolDef) int {
	n := partOverhead + len(system)
	for _, t := range tools {
		n += partOverhead + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return ceilDiv(n, bytesPerToken)
}

// messageTokens estimates one message.
func messageTokens(m llm.Message) int {
	n := partOverhead + len(m.Text)
	for _, c := range m.ToolCalls {
		n += partOverhead + len(c.ID) + len(c.Name) + len(c.Args) + len(c.Signature)
	}
	images := len(m.Images)
	for _, r := range m.Results {
		n += partOverhead + len(r.CallID) + len(r.Name) + len(r.Content)
		images += len(r.Images)
	}
	return ceilDiv(n, bytesPerToken) + images*imageTokens
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Cut is how one model call's history was fitted into the model's
// context window.
type Cut struct {
	Window Window `json:"window"`
	// Tokens is the estimated size of the request as sent (EstimateTokens),
	// marker included.
	Tokens int `json:"tokens"`
	// Sent is how many history messages are sent, the marker not counted.
	Sent int `json:"sent"`
	// Dropped is how many earlier messages are left out, counted as the
	// transcript stores them (a call and its result are two); zero when
	// the whole history is sent.
	Dropped int `json:"dropped"`
	// Marker is the message that tells the model what is left out; empty
	// when nothing is.
	Marker string `json:"marker,omitempty"`
}

// history is the model's view of a conversation, as a run builds it.
type history struct {
	msgs []llm.Message
	// turnStart is the index of the running turn's first message: the
	// current turn's user messages (its context message, its message and
	// any answers) are never cut.
	turnStart int
	// seqs are the stored Seq of msgs[i] for i < len(seqs) (the messages
	// loaded from the store), so that the marker can say where
	// read_transcript should start.
	seqs []int64
	// trimmed counts the stored messages MaxHistory already left out.
	trimmed int
}

// buildHistory is the model's view of msgs (a conversation's stored
// messages, oldest first) for the turn turnID: at most max messages of
// the earlier turns (see trimHistory), then every message of the turn
// itself (a resumed turn may have more than max; the context window's
// cut, which never drops its user messages, bounds those), and where the
// turn's own messages start.
func buildHistory(msgs []store.Message, max int, turnID string) history {
	split := len(msgs)
	for i, m := range msgs {
		if m.TurnID == turnID {
			split = i
			break
		}
	}
	earlier := trimHistory(msgs[:split], max)
	h := history{trimmed: countShown(msgs[:split-len(earlier)])}
	h.msgs, h.seqs = toLLMSeqs(earlier, turnID)
	h.turnStart = len(h.msgs)
	current, seqs := toLLMSeqs(msgs[split:], turnID)
	h.msgs, h.seqs = append(h.msgs, current...), append(h.seqs, seqs...)
	return h
}

// countShown counts the stored messages the model would have seen: not
// context messages (of other turns) nor anything else toLLM skips.
func countShown(msgs []store.Message) int {
	n := 0
	for _, m := range msgs {
		switch m.Role {
		case string(llm.User), string(llm.Assistant), string(llm.Tool), roleToolCall:
			n++
		}
	}
	return n
}

// unit is a run of history messages cut or kept together: a user message,
// or an assistant message with the tool message answering its calls.
type unit struct {
	start, end int
	tokens     int
	// keep marks the running turn's user messages, never cut.
	keep bool
}

func (h history) units() []unit {
	us := make([]unit, 0, len(h.msgs))
	for i, m := range h.msgs {
		t := messageTokens(m)
		if m.Role == llm.Tool && len(us) > 0 {
			us[len(us)-1].end, us[len(us)-1].tokens = i+1, us[len(us)-1].tokens+t
			continue
		}
		us = append(us, unit{start: i, end: i + 1, tokens: t, keep: i >= h.turnStart && m.Role == llm.User})
	}
	return us
}

// fit returns the messages to send so that, with fixed tokens of system
// prompt and tools, the request stays within budget tokens; and from, the
// index of the oldest message it keeps that could have been cut.
//
// Units before prev (an earlier call's from) are cut again, so a cut
// never moves back and the prefix the provider caches stays put. When more
// must go, unkept units go oldest first until the request fits in 7/8 of
// the budget, so the next calls of the turn keep the same cut. The
// running turn's user messages stay in place; the marker goes right
// before the oldest message kept after a cut. Whenever the fixed part,
// the turn's user messages and the marker fit, the result fits.
func (h history) fit(fixed, budget, prev int) ([]llm.Message, Cut, int) {
	total := fixed
	for _, m := range h.msgs {
		total += messageTokens(m)
	}
	if prev == 0 && h.trimmed == 0 && total <= budget {
		return h.msgs, Cut{Tokens: total, Sent: len(h.msgs)}, 0
	}
	us := h.units()
	dropped := make([]bool, len(us))
	kept := total + markerTokens
	for i, u := range us {
		if !u.keep && u.start < prev {
			dropped[i], kept = true, kept-u.tokens
		}
	}
	if kept > budget {
		target := budget - budget/8
		for i, u := range us {
			if kept <= target {
				break
			}
			if !u.keep && !dropped[i] {
				dropped[i], kept = true, kept-u.tokens
			}
		}
	}
	return h.assemble(us, dropped, fixed, total)
}

// assemble builds the messages fit sends: the kept user messages of the
// running turn before the cut, the marker, then everything from the
// oldest unit kept.
func (h history) assemble(us []unit, dropped []bool, fixed, total int) ([]llm.Message, Cut, int) {
	from := len(h.msgs)
	for i, u := range us {
		if !u.keep && !dropped[i] {
			from = u.start
			break
		}
	}
	var out []llm.Message
	n, inTurn := h.trimmed, false
	for i, u := range us {
		if u.start >= from {
			break
		}
		switch {
		case dropped[i]:
			n += weight(h.msgs[u.start:u.end])
			inTurn = inTurn || u.start >= h.turnStart
		case u.keep:
			out = append(out, h.msgs[u.start:u.end]...)
		}
	}
	if n == 0 {
		return h.msgs, Cut{Tokens: total, Sent: len(h.msgs)}, 0
	}
	var before int64
	if from < len(h.seqs) && from < h.turnStart {
		before = h.seqs[from]
	}
	marker := markerText(n, before, inTurn)
	out = append(out, llm.Message{Role: llm.User, Text: marker})
	out = append(out, h.msgs[from:]...)
	c := Cut{Tokens: fixed, Sent: len(out) - 1, Dropped: n, Marker: marker}
	for _, m := range out {
		c.Tokens += messageTokens(m)
	}
	return out, c, from
}

// weight counts msgs as the transcript stores them: an assistant message
// and each of its calls, each result.
func weight(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		switch m.Role {
		case llm.Tool:
			n += len(m.Results)
		case llm.Assistant:
			n += 1 + len(m.ToolCalls)
		default:
			n++
		}
	}
	return n
}

// markerText is the message that tells the model n earlier messages are
// left out; before is the Seq read_transcript should read back from (0
// when no earlier turn is shown), inTurn whether some of the running
// turn's own calls are left out.
func markerText(n int, before int64, inTurn bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%d earlier messages of this conversation are not shown here, to fit the model's context window; read_transcript can read earlier turns", n)
	if before > 0 {
		fmt.Fprintf(&b, " (before=%d)", before)
	}
	if inTurn {
		b.WriteString("; some earlier tool calls of this turn are left out too: call again what you still need, or read a stored result with read_tool_result")
	}
	b.WriteString(".]")
	return b.String()
}

// fitter is a run's model: before each call it cuts the history to the
// model's context window (history.fit), and when the provider answers
// that the request is too long anyway (before any output), it retries
// once, cut to half the estimate it sent. It never fails a call itself.
type fitter struct {
	llm.Model
	win Window
	log *slog.Logger
	// h is the run's history without its messages: each call brings them.
	h history
	// from is the cut so far (history.fit's prev).
	from int
}

// Stream implements llm.Model.
func (f *fitter) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		sent, c := f.fit(req, f.win.Budget())
		err := f.relay(ctx, sent, yield)
		if err == nil {
			return
		}
		tighter, tc := f.fit(req, c.Tokens/2)
		if tc.Tokens >= c.Tokens {
			yield(llm.Event{}, err)
			return
		}
		f.log.Info("model refused the request as too long; retrying with a tighter cut", "model", f.Ref(), "tokens", c.Tokens, "retry_tokens", tc.Tokens)
		if err := f.relay(ctx, tighter, yield); err != nil {
			yield(llm.Event{}, err)
		}
	}
}

// relay streams req's events to yield, except a context-length error
// that comes before any event, which it returns unyielded.
func (f *fitter) relay(ctx context.Context, req llm.Request, yield func(llm.Event, error) bool) error {
	produced := false
	for ev, err := range f.Model.Stream(ctx, req) {
		if e, ok := llm.AsError(err); ok && !produced && e.Kind == llm.ErrContextLength {
			return err
		}
		produced = true
		if !yield(ev, err) || err != nil {
			return nil
		}
	}
	return nil
}

// fit returns req with its history cut to budget, moving the run's cut
// on, and logs a cut that grew.
func (f *fitter) fit(req llm.Request, budget int) (llm.Request, Cut) {
	h := f.h
	h.msgs = req.Messages
	msgs, c, from := h.fit(fixedTokens(req.System, req.Tools), budget, f.from)
	c.Window = f.win
	if from > f.from {
		f.log.Info("history cut to fit the model's context window", "model", f.Ref(), "dropped", c.Dropped, "tokens", c.Tokens, "window", f.win.Tokens)
	}
	f.from = from
	req.Messages = msgs
	return req, c
}

// window is the context window of the model ref, defaults filled in.
func (r *Runner) window(ref string) Window {
	if r.cfg.Windows == nil {
		return DefaultWindow.withDefaults()
	}
	return r.cfg.Windows(ref).withDefaults()
}

// Preview is the cut the first model call of s's turn makes: with the
// messages s.History holds before the turn, then the turn's context
// message and message — its stored ones when s.History holds the turn
// (a stored turn: the cut its first call made), else s.Request.Context
// and s.Message. Nothing is read or written. Later calls of a turn cut
// further as its tool results add up.
func (r *Runner) Preview(s Start) Cut {
	earlier, current := splitAt(s.History, s.Facts.TurnID)
	if len(current) == 0 {
		current = []store.Message{{Role: roleContext, Content: s.Request.Context, TurnID: s.Facts.TurnID}, {Role: string(llm.User), Content: s.Message, TurnID: s.Facts.TurnID}}
	}
	h := buildHistory(earlier, r.cfg.MaxHistory, s.Facts.TurnID)
	for _, m := range current {
		h.msgs = addMessage(h.msgs, m, s.Facts.TurnID)
	}
	win := r.window(s.Facts.Model.Provider + ":" + s.Facts.Model.Name)
	_, c, _ := h.fit(fixedTokens(s.Request.System, s.Request.Tools), win.Budget(), 0)
	c.Window = win
	return c
}

// splitAt splits msgs before the turn turnID's first message, and keeps
// of the turn its messages up to its first user message.
func splitAt(msgs []store.Message, turnID string) (earlier, current []store.Message) {
	for i, m := range msgs {
		if m.TurnID != turnID {
			continue
		}
		for j := i; j < len(msgs); j++ {
			if msgs[j].Role == string(llm.User) {
				return msgs[:i], msgs[i : j+1]
			}
		}
		return msgs[:i], msgs[i:]
	}
	return msgs, nil
}
