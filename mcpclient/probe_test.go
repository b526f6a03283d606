package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProbeReport: a report lists the tools in order, makes the given
// calls and then, with all, one sampled call per tool; a tool's error
// result and a refused call are recorded, not returned, and make the
// report Failed.
func TestProbeReport(t *testing.T) {
	e := newEnv(t, nil)
	p := startPeer(t, "peer", peerOpts{})
	addEcho(p.srv, "echo")
	addRaw(p.srv, &mcp.Tool{Name: "boom", Description: "Fails.\nAlways."}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
	})
	conn, err := e.pool.Probe(context.Background(), p.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	given := []ProbeCall{{Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}
	r := conn.Report(context.Background(), given, false)
	want := ProbeReport{
		Server: mcp.Implementation{Name: "peer", Version: "1"}, Transport: TransportStreamable,
		Tools: []ProbeTool{{Name: "boom", Description: "Fails.\nAlways."}, {Name: "echo", Description: "Echoes echo."}},
		Calls: []ProbeCall{{Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), Content: "echo: hi"}},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if r.Failed() || given[0].Content != "" {
		t.Errorf("Failed = %t, given = %+v; want a passing report and the given calls untouched", r.Failed(), given)
	}

	r = conn.Report(context.Background(), nil, true)
	wantCalls := []ProbeCall{
		{Tool: "boom", Arguments: json.RawMessage(`{}`), IsError: true, Content: "it broke"},
		{Tool: "echo", Arguments: json.RawMessage(`{"text":"test"}`), Content: "echo: test"},
	}
	if diff := cmp.Diff(wantCalls, r.Calls); diff != "" || !r.Failed() {
		t.Errorf("Failed = %t; calls (-want +got):\n%s", r.Failed(), diff)
	}

	r = conn.Report(context.Background(), []ProbeCall{{Tool: "nope", Arguments: json.RawMessage(`{}`)}}, false)
	if len(r.Calls) != 1 || !r.Calls[0].IsError || r.Calls[0].Content == "" || !r.Failed() {
		t.Errorf("call to an unknown tool: %+v, want it recorded as an error", r.Calls)
	}
}

func TestSampleArgs(t *testing.T) {
	tests := []struct {
		name   string
		schema any
		want   string
	}{
		{"no schema", nil, `"test"`},
		{"unreadable", map[string]any{"type": 3, "required": "x"}, `{}`},
		{"empty object", map[string]any{"type": "object"}, `{}`},
		{"required only", map[string]any{
			"type":     "object",
			"required": []any{"q", "n", "ok", "list", "link", "none", "typeless"},
			"properties": map[string]any{
				"q": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"},
				"ok": map[string]any{"type": "boolean"}, "list": map[string]any{"type": "array"},
				"link": map[string]any{"type": "string", "format": "uri"}, "none": map[string]any{"type": "null"},
				"optional": map[string]any{"type": "string"},
			},
		}, `{"link":"https://example.com/","list":[],"n":1,"none":null,"ok":true,"q":"test","typeless":"test"}`},
		{"default, const, enum", map[string]any{
			"type": "object", "required": []any{"d", "c", "e"},
			"properties": map[string]any{
				"d": map[string]any{"type": "number", "default": 2.5},
				"c": map[string]any{"const": "fixed"},
				"e": map[string]any{"type": "string", "enum": []any{"first", "second"}},
			},
		}, `{"c":"fixed","d":2.5,"e":"first"}`},
		{"type list", map[string]any{"type": []any{"null", "integer"}}, `1`},
		{"properties without type", map[string]any{"properties": map[string]any{}, "required": []any{"x"}}, `{"x":"test"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(sampleArgs(tc.schema)); got != tc.want {
				t.Errorf("sampleArgs = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSampleArgsDepth: objects nested past the depth limit are left
// empty, so a recursive schema still gives finite arguments.
func TestSampleArgsDepth(t *testing.T) {
	leaf := map[string]any{"type": "object", "required": []any{"x"}, "properties": map[string]any{"x": map[string]any{"type": "string"}}}
	s := leaf
	for range 10 {
		s = map[string]any{"type": "object", "required": []any{"in"}, "properties": map[string]any{"in": s}}
	}
	var v any
	if err := json.Unmarshal(sampleArgs(s), &v); err != nil {
		t.Fatal(err)
	}
	depth := 0
	for m, ok := v.(map[string]any); ok && len(m) > 0; m, ok = m["in"].(map[string]any) {
		depth++
	}
	if depth != 8 {
		t.Errorf("nested %d levels, want 8", depth)
	}
}
