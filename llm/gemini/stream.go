package gemini

import (
	"encoding/json"
	"fmt"
	"strconv"

	"google.golang.org/genai"

	"github.com/quiverhq/quiver/llm"
)

// reply turns the chunks of one streamed reply into events. Gemini sends
// each function call whole, in one part; text arrives as deltas; every
// chunk may carry the usage so far; the finish reason comes in the last
// chunk with content, possibly followed by one with usage only.
type reply struct {
	calls   int         // function calls so far, for IDs and the stop reason
	ids     llm.CallIDs // keeps the calls' IDs distinct in the reply
	finish  genai.FinishReason
	blocked genai.BlockedReason
	usage   *genai.GenerateContentResponseUsageMetadata
}

// chunk yields the events c carries. It reports false when the consumer
// stopped.
func (r *reply) chunk(c *genai.GenerateContentResponse, yield func(llm.Event, error) bool) bool {
	if c.UsageMetadata != nil {
		r.usage = c.UsageMetadata // a running total: the last one counts
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		r.blocked = c.PromptFeedback.BlockReason
	}
	if len(c.Candidates) == 0 || c.Candidates[0] == nil {
		return true
	}
	cand := c.Candidates[0] // one candidate is asked for
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		r.finish = cand.FinishReason
	}
	if cand.Content == nil {
		return true
	}
	for _, p := range cand.Content.Parts {
		if !r.part(p, yield) {
			return false
		}
	}
	return true
}

// part yields a text delta, or a function call's start and the call.
// Thoughts are the model's own notes, not the reply, and are skipped.
func (r *reply) part(p *genai.Part, yield func(llm.Event, error) bool) bool {
	switch {
	case p == nil || (p.Thought && p.FunctionCall == nil):
		return true
	case p.FunctionCall != nil:
		call, err := r.call(p.FunctionCall)
		if err != nil {
			yield(llm.Event{}, err)
			return false
		}
		call.Signature = p.ThoughtSignature
		return yield(llm.Event{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: call.ID, Name: call.Name}}, nil) &&
			yield(llm.Event{Kind: llm.EventToolCall, ToolCall: call}, nil)
	case p.Text != "":
		return yield(llm.Event{Kind: llm.EventText, Text: p.Text}, nil)
	}
	return true
}

// call converts a function call, keeping the ID Gemini gives and otherwise
// numbering calls "call_1", "call_2", ... in reply order; either is made
// unique in the reply (llm.CallIDs), so a given ID that equals an earlier
// call's gets a suffix.
func (r *reply) call(fc *genai.FunctionCall) (llm.ToolCall, error) {
	r.calls++
	id := fc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(r.calls)
	}
	id = r.ids.Unique(id)
	args := []byte("{}")
	if fc.Args != nil {
		b, err := json.Marshal(fc.Args)
		if err != nil {
			return llm.ToolCall{}, &llm.Error{Kind: llm.ErrServer, Msg: fmt.Sprintf("gemini: arguments of %s: %v", fc.Name, err)}
		}
		args = b
	}
	return llm.ToolCall{ID: id, Name: fc.Name, Args: args}, nil
}

// end yields the usage and EventDone, or the error a reply without a
// usable finish reason is.
func (r *reply) end(yield func(llm.Event, error) bool) {
	stop, err := r.stop()
	if err != nil {
		yield(llm.Event{}, err)
		return
	}
	if r.usage != nil && !yield(llm.Event{Kind: llm.EventUsage, Usage: usage(r.usage)}, nil) {
		return
	}
	yield(llm.Event{Kind: llm.EventDone, Stop: stop}, nil)
}

// stop maps the finish reason. A stream that ended without one was cut
// off, unless Gemini blocked the prompt itself (then no candidate comes).
func (r *reply) stop() (llm.StopReason, error) {
	switch r.finish {
	case "":
		if r.blocked != "" {
			return llm.StopFiltered, nil
		}
		return "", &llm.Error{Kind: llm.ErrServer, Msg: "gemini: stream ended without a finish reason"}
	case genai.FinishReasonMaxTokens:
		return llm.StopLength, nil
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonLanguage,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return llm.StopFiltered, nil
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall, genai.FinishReasonTooManyToolCalls:
		// The model botched its call; sampling again may not.
		return "", &llm.Error{Kind: llm.ErrServer, Msg: "gemini: the model ended with " + string(r.finish)}
	}
	if r.calls > 0 {
		return llm.StopToolCalls, nil
	}
	return llm.StopEnd, nil // STOP, OTHER, and reasons added later
}

// usage maps Gemini's token counts. Cached tokens are part of the prompt
// count; thinking tokens are billed as output.
func usage(u *genai.GenerateContentResponseUsageMetadata) llm.Usage {
	return llm.Usage{
		InputTokens:       int64(u.PromptTokenCount),
		CachedInputTokens: int64(u.CachedContentTokenCount),
		OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
	}
}
