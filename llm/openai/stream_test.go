package openai

import (
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/quiverhq/quiver/llm"
)

// decode runs an SSE body through the SDK's decoder and translate, as a
// live stream would.
func decode(body string) ([]llm.Event, error) {
	res := &http.Response{Header: sse, Body: io.NopCloser(strings.NewReader(body))}
	s := ssestream.NewStream[sdk.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	defer s.Close()
	var evs []llm.Event
	for ev, err := range translate(s) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// FuzzTranslate feeds arbitrary event streams to the assembly logic and
// checks the contract of llm.Model.Stream: without an error, exactly one
// EventDone and last; every complete call announced first by a start with
// the same ID and name (empty for a call the model never named), in order;
// no empty text or arguments.
func FuzzTranslate(f *testing.F) {
	f.Add(chunk(`{"index":0,"delta":{"role":"assistant","content":""}}`) + chunk(`{"index":0,"delta":{"content":"Hi"}}`) +
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`) + "data: [DONE]\n\n")
	f.Add(chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}}`) +
		chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"p\":"}}]}}`) +
		chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}`) +
		chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`) + "data: [DONE]\n\n")
	f.Add(chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}`) +
		chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g"}}]},"finish_reason":"stop"}`))
	f.Add(chunk(`{"index":0,"delta":{"content":"x"}}`) + "data: {\"error\":{\"message\":\"boom\"}}\n\n")
	f.Add("data: {not json}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		evs, err := decode(body)
		checkContract(t, evs, err)
	})
}

func checkContract(t *testing.T, evs []llm.Event, err error) {
	t.Helper()
	var starts []llm.ToolCall
	calls := 0
	for i, ev := range evs {
		switch ev.Kind {
		case llm.EventDone:
			if i != len(evs)-1 || err != nil {
				t.Fatalf("EventDone at %d of %d (err %v)", i, len(evs), err)
			}
		case llm.EventText:
			if ev.Text == "" {
				t.Fatalf("empty text event")
			}
		case llm.EventToolCallStart:
			// A call the model never named is still announced (with an
			// empty name, when the reply finishes), so that the loop can
			// answer it with a refusal; an ID it always has.
			if ev.ToolCall.ID == "" {
				t.Fatalf("start without ID: %+v", ev.ToolCall)
			}
			starts = append(starts, ev.ToolCall)
		case llm.EventToolCall:
			if calls >= len(starts) || starts[calls].ID != ev.ToolCall.ID || starts[calls].Name != ev.ToolCall.Name {
				t.Fatalf("call %+v not announced in order (starts %+v)", ev.ToolCall, starts)
			}
			if len(ev.ToolCall.Args) == 0 {
				t.Fatalf("call %s without arguments", ev.ToolCall.ID)
			}
			calls++
		}
	}
	done := len(evs) > 0 && evs[len(evs)-1].Kind == llm.EventDone
	if done == (err != nil) {
		t.Fatalf("done %v with err %v: want exactly one of them", done, err)
	}
	if done && calls != len(starts) {
		t.Fatalf("%d calls started, %d completed", len(starts), calls)
	}
}
