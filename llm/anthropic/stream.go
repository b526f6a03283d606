package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/quiverhq/quiver/llm"
)

// drain yields the neutral events of an SDK stream, or the error that
// ends it, and closes it, calling progress (when set) for every provider
// event. A stream that ends before message_stop is an
// error, never a whole reply.
func (m *Model) drain(ctx context.Context, stream *ssestream.Stream[anthropic.MessageStreamEventUnion], progress func(), yield func(llm.Event, error) bool) {
	defer stream.Close()
	var a assembler
	for stream.Next() {
		if progress != nil {
			progress() // a ping, an input_json_delta, thinking: all show life
		}
		if !a.step(stream.Current(), yield) || a.done {
			return
		}
	}
	err := stream.Err()
	if err == nil {
		err = &llm.Error{Kind: llm.ErrServer, Msg: "anthropic: stream ended before message_stop"}
	}
	yield(llm.Event{}, m.classify(ctx, err))
}

// assembler turns the Messages API's stream events into neutral events:
// it assembles each tool_use block's input_json_delta pieces, combines the
// usage of message_start and message_delta, and ends with usage and done
// at message_stop. The zero value is ready; one assembler serves one
// stream.
type assembler struct {
	calls map[int64]*pendingCall // open tool_use blocks, by block index
	ids   map[string]bool        // every tool call id seen
	usage wireUsage
	stop  anthropic.StopReason
	tools bool // a tool call was completed
	done  bool // message_stop was seen
}

// wireUsage is Anthropic's token counts: input excludes the cached ones.
type wireUsage struct {
	input, cacheRead, cacheWrite, output int64
}

// pendingCall is a tool_use block whose arguments are still streaming.
type pendingCall struct {
	id, name string
	args     strings.Builder
}

// step handles one event, yielding what it completes. It reports false
// when iteration must end: the consumer stopped, or an error was yielded.
func (a *assembler) step(ev anthropic.MessageStreamEventUnion, yield func(llm.Event, error) bool) bool {
	if a.done {
		return true // nothing follows message_stop; ignore whatever does
	}
	switch ev.Type {
	case "message_start":
		a.start(ev.Message.Usage)
	case "content_block_start":
		return a.blockStart(ev, yield)
	case "content_block_delta":
		return a.blockDelta(ev, yield)
	case "content_block_stop":
		return a.blockStop(ev.Index, yield)
	case "message_delta":
		a.stop = ev.Delta.StopReason
		a.mergeUsage(ev.Usage)
	case "message_stop":
		return a.finish(yield)
	}
	return true
}

func (a *assembler) start(u anthropic.Usage) {
	a.usage = wireUsage{u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens}
}

// mergeUsage takes message_delta's counts over message_start's: they are
// cumulative, and a field message_delta leaves out keeps its start value.
func (a *assembler) mergeUsage(u anthropic.MessageDeltaUsage) {
	if u.JSON.InputTokens.Valid() {
		a.usage.input = u.InputTokens
	}
	if u.JSON.CacheReadInputTokens.Valid() {
		a.usage.cacheRead = u.CacheReadInputTokens
	}
	if u.JSON.CacheCreationInputTokens.Valid() {
		a.usage.cacheWrite = u.CacheCreationInputTokens
	}
	if u.JSON.OutputTokens.Valid() {
		a.usage.output = u.OutputTokens
	}
}

func (a *assembler) blockStart(ev anthropic.MessageStreamEventUnion, yield func(llm.Event, error) bool) bool {
	b := ev.ContentBlock
	switch b.Type {
	case "text":
		if b.Text != "" {
			return yield(llm.Event{Kind: llm.EventText, Text: b.Text}, nil)
		}
	case "tool_use":
		return a.callStart(ev.Index, b.ID, b.Name, yield)
	}
	return true // thinking and server-tool blocks are not part of the neutral reply
}

// callStart opens a tool_use block. The loop answers each call by its ID,
// so a call without an ID, or reusing one, breaks the reply; a call
// without a name is passed on with an empty Name for the loop to refuse.
func (a *assembler) callStart(index int64, id, name string, yield func(llm.Event, error) bool) bool {
	switch {
	case id == "":
		// A call without a name is still answerable (the loop refuses it);
		// one without an id is not.
		return a.fail(yield, "tool_use block %d without an id", index)
	case a.ids[id]:
		return a.fail(yield, "tool call id %q used twice", id)
	case a.calls[index] != nil:
		return a.fail(yield, "content block %d started twice", index)
	}
	if a.calls == nil {
		a.calls, a.ids = make(map[int64]*pendingCall), make(map[string]bool)
	}
	a.calls[index] = &pendingCall{id: id, name: name}
	a.ids[id] = true
	return yield(llm.Event{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: id, Name: name}}, nil)
}

func (a *assembler) blockDelta(ev anthropic.MessageStreamEventUnion, yield func(llm.Event, error) bool) bool {
	switch ev.Delta.Type {
	case "text_delta":
		if ev.Delta.Text != "" {
			return yield(llm.Event{Kind: llm.EventText, Text: ev.Delta.Text}, nil)
		}
	case "input_json_delta":
		c, ok := a.calls[ev.Index]
		if !ok {
			return a.fail(yield, "input_json_delta for content block %d, which is not an open tool_use block", ev.Index)
		}
		c.args.WriteString(ev.Delta.PartialJSON)
	}
	return true
}

// blockStop completes a tool_use block. No input deltas means no
// arguments: the call's input is the empty object.
func (a *assembler) blockStop(index int64, yield func(llm.Event, error) bool) bool {
	c, ok := a.calls[index]
	if !ok {
		return true
	}
	delete(a.calls, index)
	args := json.RawMessage(strings.TrimSpace(c.args.String()))
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if args[0] != '{' || !json.Valid(args) {
		return a.fail(yield, "tool call %s (%s): arguments are not a JSON object", c.id, c.name)
	}
	a.tools = true
	return yield(llm.Event{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: c.id, Name: c.name, Args: args}}, nil)
}

// finish ends the reply at message_stop: the combined usage, then done.
func (a *assembler) finish(yield func(llm.Event, error) bool) bool {
	if len(a.calls) > 0 {
		return a.fail(yield, "message_stop with %d tool_use block(s) still open", len(a.calls))
	}
	a.done = true
	if !yield(llm.Event{Kind: llm.EventUsage, Usage: a.neutralUsage()}, nil) {
		return false
	}
	return yield(llm.Event{Kind: llm.EventDone, Stop: a.stopReason()}, nil)
}

// neutralUsage reports the total input: Anthropic's input_tokens counts
// only the tokens after the last cache breakpoint, not those read from or
// written to the cache.
func (a *assembler) neutralUsage() llm.Usage {
	u := a.usage
	return llm.Usage{
		InputTokens:       u.input + u.cacheRead + u.cacheWrite,
		CachedInputTokens: u.cacheRead,
		CacheWriteTokens:  u.cacheWrite,
		OutputTokens:      u.output,
	}
}

func (a *assembler) stopReason() llm.StopReason {
	switch a.stop {
	case anthropic.StopReasonToolUse:
		return llm.StopToolCalls
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return llm.StopLength
	case anthropic.StopReasonRefusal:
		return llm.StopFiltered
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return llm.StopEnd
	}
	// No or an unknown stop reason: judge by what the reply holds.
	if a.tools {
		return llm.StopToolCalls
	}
	return llm.StopEnd
}

// fail yields a broken-stream error; the caller stops after it.
func (a *assembler) fail(yield func(llm.Event, error) bool, format string, args ...any) bool {
	yield(llm.Event{}, &llm.Error{Kind: llm.ErrServer, Msg: "anthropic: malformed stream: " + fmt.Sprintf(format, args...)})
	return false
}
