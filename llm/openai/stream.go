package openai

import (
	"iter"
	"strconv"
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/quiverhq/quiver/llm"
)

// chunks is what translate reads: the SDK's *ssestream.Stream of
// chat.completion.chunk objects, which ends at "data: [DONE]".
type chunks interface {
	Next() bool
	Current() sdk.ChatCompletionChunk
	Err() error
}

// progressChunks is a chunk stream that calls progress (when set) for
// every chunk read.
type progressChunks struct {
	chunks
	progress func()
}

// Next implements chunks.
func (p progressChunks) Next() bool {
	ok := p.chunks.Next()
	if ok && p.progress != nil {
		p.progress()
	}
	return ok
}

// translate turns a chunk stream into neutral events: text as it arrives,
// a tool call's start as soon as its name is known, the complete calls at
// the finish reason, usage when reported, and EventDone once the stream
// has ended cleanly. A stream that ends without a finish reason yields an
// error instead of EventDone. Errors are returned unclassified.
func translate(s chunks) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		var a assembler
		for s.Next() {
			evs, err := a.chunk(s.Current())
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
		}
		if err := s.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		if !a.finished {
			yield(llm.Event{}, errNoFinish())
			return
		}
		yield(llm.Event{Kind: llm.EventDone, Stop: a.stop}, nil)
	}
}

// errNoFinish is a stream that stopped before the model did.
func errNoFinish() error {
	return &llm.Error{Kind: llm.ErrServer, Msg: "stream ended without a finish reason"}
}

// assembler keeps the state of one streamed reply. Its zero value is ready.
type assembler struct {
	calls []*pendingCall
	// byIndex maps a delta's tool-call index to its entry in calls.
	byIndex  map[int64]int
	finished bool
	stop     llm.StopReason
	// ids keeps the reply's call IDs distinct: a made-up one may equal
	// what the server gives a later call.
	ids llm.CallIDs
	// out is reused for each chunk's events.
	out []llm.Event
}

// pendingCall is a tool call whose arguments are still streaming.
type pendingCall struct {
	// id is the call's ID as emitted, set when the call starts: given, or
	// made up when the server gave none, and unique in the reply.
	id, name string
	// given is the ID the server gave, idGiven whether it gave one.
	given   string
	idGiven bool
	started bool
	args    strings.Builder
}

// chunk takes one chunk and returns the events it completes; the slice is
// valid until the next call. Only choice 0 is read (we never ask for more);
// deltas after the finish reason are ignored.
func (a *assembler) chunk(c sdk.ChatCompletionChunk) ([]llm.Event, error) {
	a.out = a.out[:0]
	for _, ch := range c.Choices {
		if ch.Index != 0 || a.finished {
			continue
		}
		a.delta(ch.Delta)
		if ch.FinishReason != "" {
			if err := a.finish(ch.FinishReason); err != nil {
				return a.out, err
			}
		}
	}
	if c.JSON.Usage.Valid() {
		a.out = append(a.out, llm.Event{Kind: llm.EventUsage, Usage: usage(c.Usage)})
	}
	return a.out, nil
}

func (a *assembler) delta(d sdk.ChatCompletionChunkChoiceDelta) {
	if d.Content != "" {
		a.out = append(a.out, llm.Event{Kind: llm.EventText, Text: d.Content})
	}
	// A refusal is the model's answer to the user, in its own words.
	if d.Refusal != "" {
		a.out = append(a.out, llm.Event{Kind: llm.EventText, Text: d.Refusal})
	}
	for _, tc := range d.ToolCalls {
		a.toolDelta(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
}

// toolDelta adds one piece of a tool call. OpenAI sends the ID and name in
// a call's first delta and then only arguments under the same index. Some
// compatible servers reuse one index for several calls, each with its own
// ID; a new server-given ID under an index therefore starts a new call.
// Names are taken once, not concatenated, since some servers repeat them.
func (a *assembler) toolDelta(index int64, id, name, args string) {
	pos, ok := a.byIndex[index]
	if !ok || (id != "" && a.calls[pos].idGiven && id != a.calls[pos].given) {
		if a.byIndex == nil {
			a.byIndex = make(map[int64]int)
		}
		pos = len(a.calls)
		a.byIndex[index] = pos
		a.calls = append(a.calls, &pendingCall{})
	}
	c := a.calls[pos]
	if id != "" && !c.started {
		c.given, c.idGiven = id, true
	}
	if c.name == "" {
		c.name = name
	}
	c.args.WriteString(args)
	if c.name != "" && !c.started {
		a.start(pos, c)
	}
}

// start gives the call at pos its ID (the server's, else "call_<pos>";
// either made unique in the reply) and announces it.
func (a *assembler) start(pos int, c *pendingCall) {
	id := c.given
	if id == "" {
		id = "call_" + strconv.Itoa(pos)
	}
	c.id, c.started = a.ids.Unique(id), true
	a.out = append(a.out, llm.Event{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: c.id, Name: c.name}})
}

// finish records the stop reason and completes every call, in the order
// they started (a call that never got a name with an empty Name). Arguments are the model's text as streamed, which may be
// invalid JSON (dispatch answers that to the model); none at all is "{}".
func (a *assembler) finish(reason string) error {
	a.finished = true
	a.stop = stopReason(reason, len(a.calls) > 0)
	for pos, c := range a.calls {
		if !c.started {
			// A call that never got a name is still one of the model's
			// calls: the loop answers it with a refusal and the turn goes
			// on, rather than the whole reply failing.
			a.start(pos, c)
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		a.out = append(a.out, llm.Event{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: c.id, Name: c.name, Args: []byte(args)}})
	}
	return nil
}

// stopReason maps a finish_reason. Some compatible servers say "stop" (or
// something of their own) when the reply holds tool calls; the calls still
// want results, so that is StopToolCalls. Any other unknown reason is a
// model that stopped: StopEnd.
func stopReason(reason string, calls bool) llm.StopReason {
	switch reason {
	case "length":
		return llm.StopLength
	case "content_filter":
		return llm.StopFiltered
	case "tool_calls", "function_call":
		return llm.StopToolCalls
	}
	if calls {
		return llm.StopToolCalls
	}
	return llm.StopEnd
}

func usage(u sdk.CompletionUsage) llm.Usage {
	return llm.Usage{
		InputTokens:       u.PromptTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		OutputTokens:      u.CompletionTokens,
	}
}
