package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/quiverhq/quiver/llm"
)

// streamOf decodes data as the SDK decodes a response body.
func streamOf(data []byte) *ssestream.Stream[anthropic.MessageStreamEventUnion] {
	res := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(data)),
		Request:    &http.Request{Method: http.MethodPost},
	}
	return ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
}

// drainAll runs data through the adapter's stream handling, checking the
// llm.Model contract as it goes: nothing after an error, exactly one
// EventDone and only last, complete calls announced first and holding a
// JSON object, every error an *llm.Error.
func drainAll(t *testing.T, data []byte) ([]llm.Event, error) {
	m, err := New(Config{Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	var events []llm.Event
	var final error
	started := map[string]string{}
	m.drain(context.Background(), streamOf(data), nil, func(ev llm.Event, err error) bool {
		if final != nil || (len(events) > 0 && events[len(events)-1].Kind == llm.EventDone) {
			t.Fatalf("yield after the end: %+v, %v", ev, err)
		}
		if err != nil {
			if _, ok := llm.AsError(err); !ok {
				t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
			}
			final = err
			return false
		}
		switch ev.Kind {
		case llm.EventToolCallStart:
			started[ev.ToolCall.ID] = ev.ToolCall.Name
		case llm.EventToolCall:
			if name, ok := started[ev.ToolCall.ID]; !ok || name != ev.ToolCall.Name {
				t.Fatalf("call %s %s completed without its start", ev.ToolCall.ID, ev.ToolCall.Name)
			}
			if args := ev.ToolCall.Args; len(args) == 0 || args[0] != '{' || !json.Valid(args) {
				t.Fatalf("call %s: arguments %q are not a JSON object", ev.ToolCall.ID, args)
			}
		}
		events = append(events, ev)
		return true
	})
	if final == nil && (len(events) == 0 || events[len(events)-1].Kind != llm.EventDone) {
		t.Fatalf("stream ended with neither EventDone nor an error: %+v", events)
	}
	return events, final
}

// FuzzStream feeds arbitrary bytes to the stream handling as a response
// body. Seeds in testdata/fuzz/FuzzStream are real-format streams: whole
// replies with text and tool calls, truncated ones, error events.
func FuzzStream(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		drainAll(t, data)
	})
}

// FuzzArgs streams a tool call's arguments cut in three pieces at
// arbitrary places and checks the assembled call is exactly the argument
// text when that is a JSON object, {} when empty, and an error otherwise.
func FuzzArgs(f *testing.F) {
	f.Fuzz(func(t *testing.T, args string, cut1, cut2 uint) {
		if !utf8.ValidString(args) {
			t.Skip("partial_json is a JSON string: always valid UTF-8")
		}
		body := sseStart + toolBlockPieces(args, cut1, cut2) + sseEnd + sseStop
		events, err := drainAll(t, []byte(body))
		trimmed := strings.TrimSpace(args)
		want := trimmed
		if want == "" {
			want = "{}"
		}
		isObject := want[0] == '{' && json.Valid([]byte(want))
		if !isObject {
			if err == nil {
				t.Fatalf("arguments %q accepted", args)
			}
			return
		}
		if err != nil {
			t.Fatalf("arguments %q refused: %v", args, err)
		}
		if len(events) < 2 || events[1].Kind != llm.EventToolCall || string(events[1].ToolCall.Args) != want {
			t.Fatalf("events %+v, want the call with arguments %s", events, want)
		}
	})
}

// toolBlockPieces is a tool_use block at index 0 whose arguments arrive in
// three pieces, cut at rune boundaries.
func toolBlockPieces(args string, cut1, cut2 uint) string {
	a := runeCut(args, int(cut1%uint(len(args)+1)))
	b := runeCut(args, int(cut2%uint(len(args)+1)))
	a, b = min(a, b), max(a, b)
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	out := ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c1","name":"t","input":{}}}`)
	for _, piece := range []string{args[:a], args[a:b], args[b:]} {
		p, _ := json.Marshal(piece)
		out += ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(p)+`}}`)
	}
	return out + ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
}

func runeCut(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
