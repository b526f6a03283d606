// Package textproto gives tools to models whose endpoint ignores the native
// tools field: the tool definitions travel in the system prompt, and the
// model's calls are parsed out of its reply text.
//
// Wrap turns any llm.Model into such a model. The model is told to call a
// tool by writing one block per call:
//
//	<tool_call>{"name": "web_search", "arguments": {"query": "go 1.26"}}</tool_call>
//
// and it reads results in the next user message as
//
//	<tool_result name="web_search" id="call_1">
//	…
//	</tool_result>
//
// with error="true" on a failed call. The rest of Quiver sees an ordinary
// tool-calling model: calls arrive as EventToolCallStart and EventToolCall
// with IDs "call_1", "call_2", … per reply, and history keeps native
// ToolCalls and Results, which Wrap turns back into text on every request.
//
// # Selecting the protocol
//
// The protocol is chosen per model in Quiver's configuration, next to the
// model's other settings; a model whose setting asks for the text protocol
// is wrapped once, where models are built from their references:
//
//	models:
//	  "openai:my-finetune":
//	    tool_protocol: text   # "native" (the default) or "text"
//
// Every other model keeps its provider's native tool calling.
//
// # Parsing model mess
//
// The parser forgives what models really write: whitespace inside the
// tags, the JSON in a ```json fence, arguments given as a JSON-encoded
// string or under "parameters", "args" or "input", an OpenAI-style
// {"function": {...}} wrapper, raw newlines inside strings, trailing commas,
// a tool name with "-" for "_" (matched against the declared names; an
// unknown name is still emitted, for dispatch to refuse), and blocks cut off
// by the end of the reply or by the next <tool_call>, which are recovered
// when closing their open strings and brackets makes valid JSON and dropped
// otherwise. A recovered call's last string may have been cut short.
//
// A block whose body does not start like JSON (a mention of the tag in
// prose) is text, and so is a complete block that holds no call; a closing
// tag with no opening one is text too. Calls written after a final answer
// still count. The tags always end a block, even inside a JSON string: the
// history renderer escapes "<" in arguments so the model never sees a tag
// there.
package textproto

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// Wrap returns a model that offers req.Tools to inner through the text
// protocol: the tools go into the system prompt, none are sent natively,
// history is rewritten into text, and calls are parsed from the reply.
// Usage and errors pass through unchanged. The result is safe for
// concurrent use when inner is; wrapping it again returns it as it is.
func Wrap(inner llm.Model) llm.Model {
	if m, ok := inner.(*model); ok {
		return m
	}
	return &model{inner: inner}
}

type model struct {
	inner llm.Model
}

// Ref returns the inner model's reference.
func (m *model) Ref() string { return m.inner.Ref() }

// Capabilities returns the inner model's, with tools and parallel tool
// calls, which the wrapper provides.
func (m *model) Capabilities() turn.Capabilities {
	c := m.inner.Capabilities()
	c.Tools, c.ParallelTools = true, true
	return c
}

// CheckTool accepts any declaration whose parameters are JSON (or empty):
// the schema goes into the prompt as written, never to the provider.
func (m *model) CheckTool(d llm.ToolDef) error {
	if len(d.Parameters) > 0 && !json.Valid(d.Parameters) {
		return &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("tool %q: parameters are not valid JSON", d.Name)}
	}
	return nil
}

// Stream sends req to the inner model through the text protocol.
func (m *model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		inner, err := innerRequest(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		r := relay{p: newParser(toolNames(req.Tools)), yield: yield}
		for ev, err := range m.inner.Stream(ctx, inner) {
			if err != nil {
				yield(ev, err)
				return
			}
			if !r.event(ev) {
				return
			}
		}
	}
}

// relay turns the inner model's events into the wrapper's: text goes
// through the parser, the rest passes unchanged once the parser is flushed.
type relay struct {
	p     *parser
	yield func(llm.Event, error) bool
	calls int
}

func (r *relay) event(ev llm.Event) bool {
	switch ev.Kind {
	case llm.EventText:
		return r.pieces(r.p.feed(ev.Text))
	case llm.EventToolCall:
		r.calls++ // a native call despite no tools sent: pass it on
	case llm.EventUsage:
		// Usage ends the reply's content: calls must come before it.
		if !r.pieces(r.p.flush()) {
			return false
		}
	case llm.EventDone:
		if !r.pieces(r.p.flush()) {
			return false
		}
		if r.calls > 0 {
			ev.Stop = llm.StopToolCalls
		}
	}
	return r.yield(ev, nil)
}

func (r *relay) pieces(ps []piece) bool {
	for _, pc := range ps {
		if !pc.isCall {
			if !r.yield(llm.Event{Kind: llm.EventText, Text: pc.text}, nil) {
				return false
			}
			continue
		}
		r.calls++
		start := llm.ToolCall{ID: pc.call.ID, Name: pc.call.Name}
		if !r.yield(llm.Event{Kind: llm.EventToolCallStart, ToolCall: start}, nil) ||
			!r.yield(llm.Event{Kind: llm.EventToolCall, ToolCall: pc.call}, nil) {
			return false
		}
	}
	return true
}

func toolNames(tools []llm.ToolDef) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}
