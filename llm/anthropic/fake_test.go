package anthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestFakeRefuses holds the fake to the rules the real API enforces, so
// the wire tests above cannot pass on a request Anthropic would refuse.
func TestFakeRefuses(t *testing.T) {
	user := func(content string) string { return `{"role":"user","content":` + content + `}` }
	asst := func(content string) string { return `{"role":"assistant","content":` + content + `}` }
	call := asst(`[{"type":"tool_use","id":"c1","name":"t","input":{}}]`)
	tests := []struct {
		name, messages string
		noVersion      bool
		extra          string
		ok             bool
	}{
		{name: "valid", messages: user(`"hi"`) + "," + call + "," + user(`[{"type":"tool_result","tool_use_id":"c1","content":"x"},{"type":"text","text":"go on"}]`), ok: true},
		{name: "two user messages", messages: user(`"a"`) + "," + user(`"b"`)},
		{name: "assistant first", messages: asst(`"a"`)},
		{name: "empty text", messages: user(`[{"type":"text","text":""}]`)},
		{name: "tool result after text", messages: user(`"hi"`) + "," + call + "," + user(`[{"type":"text","text":"go on"},{"type":"tool_result","tool_use_id":"c1"}]`)},
		{name: "call left unanswered", messages: user(`"hi"`) + "," + call + "," + user(`"go on"`)},
		{name: "result for an unknown call", messages: user(`"hi"`) + "," + call + "," + user(`[{"type":"tool_result","tool_use_id":"c9"}]`)},
		{name: "tool input not an object", messages: user(`"hi"`) + "," + asst(`[{"type":"tool_use","id":"c1","name":"t","input":"x"}]`)},
		{name: "no anthropic-version", messages: user(`"hi"`), noVersion: true},
		{name: "no max_tokens", messages: user(`"hi"`), extra: `,"max_tokens":0`},
		{name: "not streaming", messages: user(`"hi"`), extra: `,"stream":false`},
	}
	srv := httptest.NewServer(llmtest.Anthropic{}.Handler(nil, func(llmtest.Seen) llmtest.Reply { return llmtest.Reply{Text: []string{"ok"}} }))
	defer srv.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A repeated key overrides: the last one counts.
			body := `{"model":"m","max_tokens":10,"stream":true,"messages":[` + tc.messages + `]` + tc.extra + `}`
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
			if !tc.noVersion {
				req.Header.Set("anthropic-version", "2023-06-01")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if got := res.StatusCode == http.StatusOK; got != tc.ok {
				t.Errorf("status %d, want ok %v: %s", res.StatusCode, tc.ok, b)
			}
			if !tc.ok && !strings.Contains(string(b), `"invalid_request_error"`) {
				t.Errorf("refusal body %s, want an invalid_request_error", b)
			}
		})
	}
}

// TestFakeDecodes checks the fake's reading of the wire forms the adapter
// does not send: string system and content.
func TestFakeDecodes(t *testing.T) {
	var got llm.Request
	srv := httptest.NewServer(llmtest.Anthropic{}.Handler(nil, func(s llmtest.Seen) llmtest.Reply { got = s.Req; return llmtest.Reply{Text: []string{"ok"}} }))
	defer srv.Close()
	body := `{"model":"m","max_tokens":10,"stream":true,"system":"Be brief.","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","description":"d","input_schema":{"type":"object"}}]}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("anthropic-version", "2023-06-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	want := llm.Request{
		System:    "Be brief.",
		Messages:  []llm.Message{{Role: llm.User, Text: "hi"}},
		Tools:     []llm.ToolDef{{Name: "t", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 10,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}
