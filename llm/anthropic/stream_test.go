package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
)

// Hand-written streams, for what the scripted fake does not produce.
const (
	sseStart = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}}}` + "\n\n"
	sseText = "event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n"
	sseTextStop = "event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n"
	sseEnd      = "event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}` + "\n\n"
	sseStop = "event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
)

// sseServer answers every request with body as an event stream.
func sseServer(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func collectFrom(t *testing.T, url string) ([]llm.Event, error) {
	t.Helper()
	var events []llm.Event
	_, err := llm.Collect(newTestModel(t, url).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), func(ev llm.Event) {
		events = append(events, ev)
	})
	return events, err
}

func TestStreamErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind llm.ErrorKind
		msg  string // in the error's text
	}{
		{
			name: "overloaded mid-stream",
			body: sseStart + sseText + "event: error\n" + `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n",
			kind: llm.ErrOverloaded, msg: "Overloaded",
		},
		{
			name: "api error mid-stream",
			body: sseStart + "event: error\n" + `data: {"type":"error","error":{"type":"api_error","message":"Internal server error"}}` + "\n\n",
			kind: llm.ErrServer, msg: "Internal server error",
		},
		{
			name: "malformed event JSON",
			body: sseStart + "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel` + "\n\n",
			kind: llm.ErrServer, msg: "malformed",
		},
		{
			name: "no message_stop",
			body: sseStart + sseText + sseTextStop + sseEnd,
			kind: llm.ErrServer, msg: "message_stop",
		},
		{
			name: "arguments not JSON",
			body: sseStart + toolBlock(0, "c1", "read_file", `{"path":`) + sseEnd + sseStop,
			kind: llm.ErrServer, msg: "arguments",
		},
		{
			name: "arguments not an object",
			body: sseStart + toolBlock(0, "c1", "read_file", `[1]`) + sseEnd + sseStop,
			kind: llm.ErrServer, msg: "arguments",
		},
		{
			name: "input delta for a text block",
			body: sseStart + sseText + "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}` + "\n\n" + sseStop,
			kind: llm.ErrServer, msg: "not an open tool_use block",
		},
		{
			name: "tool call without an id",
			body: sseStart + toolBlock(0, "", "read_file", `{}`) + sseEnd + sseStop,
			kind: llm.ErrServer, msg: "without an id",
		},
		{
			name: "tool call id reused",
			body: sseStart + toolBlock(0, "c1", "read_file", `{}`) + toolBlock(1, "c1", "read_file", `{}`) + sseEnd + sseStop,
			kind: llm.ErrServer, msg: "used twice",
		},
		{
			name: "tool block never stopped",
			body: sseStart + "event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c1","name":"t","input":{}}}` + "\n\n" + sseEnd + sseStop,
			kind: llm.ErrServer, msg: "still open",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, err := collectFrom(t, sseServer(t, tc.body))
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("error %v (%T), want *llm.Error", err, err)
			}
			if e.Kind != tc.kind || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("error %+v, want kind %s with %q", e, tc.kind, tc.msg)
			}
			if e.Status != 0 {
				t.Errorf("status %d: an error inside a 200 stream has no HTTP status", e.Status)
			}
			for _, ev := range events {
				if ev.Kind == llm.EventDone {
					t.Error("EventDone before the error")
				}
			}
		})
	}
}

// toolBlock is a tool_use block whose arguments arrive as args, split in
// two pieces.
func toolBlock(index int, id, name, args string) string {
	half := len(args) / 2
	var b strings.Builder
	b.WriteString("event: content_block_start\n")
	b.WriteString(`data: {"type":"content_block_start","index":` + strconv.Itoa(index) + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}` + "\n\n")
	for _, piece := range []string{args[:half], args[half:]} {
		p, _ := json.Marshal(piece)
		b.WriteString("event: content_block_delta\n")
		b.WriteString(`data: {"type":"content_block_delta","index":` + strconv.Itoa(index) + `,"delta":{"type":"input_json_delta","partial_json":` + string(p) + `}}` + "\n\n")
	}
	b.WriteString("event: content_block_stop\n")
	b.WriteString(`data: {"type":"content_block_stop","index":` + strconv.Itoa(index) + `}` + "\n\n")
	return b.String()
}

func TestStreamEvents(t *testing.T) {
	toolUse := "event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}` + "\n\n"
	tests := []struct {
		name string
		body string
		want []llm.Event
	}{
		{
			name: "text, with a ping and a thinking block skipped",
			body: sseStart + "event: ping\ndata: {\"type\":\"ping\"}\n\n" +
				"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}` + "\n\n" +
				"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}` + "\n\n" +
				"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
				strings.ReplaceAll(sseText+sseTextStop, `"index":0`, `"index":1`) + sseEnd + sseStop,
			want: []llm.Event{
				{Kind: llm.EventText, Text: "Hello"},
				{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
				{Kind: llm.EventDone, Stop: llm.StopEnd},
			},
		},
		{
			name: "tool call without arguments gets {}",
			body: sseStart + "event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"c1","name":"now","input":{}}}` + "\n\n" +
				"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" + toolUse + sseStop,
			want: []llm.Event{
				{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: "c1", Name: "now"}},
				{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: "c1", Name: "now", Args: json.RawMessage(`{}`)}},
				{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 10, OutputTokens: 9}},
				{Kind: llm.EventDone, Stop: llm.StopToolCalls},
			},
		},
		{
			name: "interleaved tool blocks assembled by index",
			body: sseStart + interleaved() + toolUse + sseStop,
			want: []llm.Event{
				{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: "a", Name: "t"}},
				{Kind: llm.EventToolCallStart, ToolCall: llm.ToolCall{ID: "b", Name: "t"}},
				{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: "b", Name: "t", Args: json.RawMessage(`{"x":2}`)}},
				{Kind: llm.EventToolCall, ToolCall: llm.ToolCall{ID: "a", Name: "t", Args: json.RawMessage(`{"x":1}`)}},
				{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 10, OutputTokens: 9}},
				{Kind: llm.EventDone, Stop: llm.StopToolCalls},
			},
		},
		{
			name: "usage in message_delta supersedes message_start",
			body: sseStart + sseText + sseTextStop + "event: message_delta\n" +
				`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":12,"cache_read_input_tokens":300,"cache_creation_input_tokens":40,"output_tokens":64}}` + "\n\n" + sseStop,
			want: []llm.Event{
				{Kind: llm.EventText, Text: "Hello"},
				{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 352, CachedInputTokens: 300, CacheWriteTokens: 40, OutputTokens: 64}},
				{Kind: llm.EventDone, Stop: llm.StopLength},
			},
		},
		{
			name: "refusal",
			body: sseStart + sseText + sseTextStop + strings.Replace(sseEnd, "end_turn", "refusal", 1) + sseStop,
			want: []llm.Event{
				{Kind: llm.EventText, Text: "Hello"},
				{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
				{Kind: llm.EventDone, Stop: llm.StopFiltered},
			},
		},
		{
			name: "events after message_stop ignored",
			body: sseStart + sseEnd + sseStop + sseText + sseStop,
			want: []llm.Event{
				{Kind: llm.EventUsage, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
				{Kind: llm.EventDone, Stop: llm.StopEnd},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, err := collectFrom(t, sseServer(t, tc.body))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tc.want, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// interleaved is two tool_use blocks whose deltas alternate, the second
// finishing first.
func interleaved() string {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	return ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"t","input":{}}}`) +
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"b","name":"t","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"x\""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\":2}"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":":1}"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
}

// TestEarlyStopClosesStream stops iterating after the first text and
// checks the server sees the request end while it still has more to send.
func TestEarlyStopClosesStream(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(sseStart + sseText))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	for ev, err := range newTestModel(t, srv.URL).Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == llm.EventText {
			break
		}
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the request was still open 5s after the consumer stopped")
	}
}
