package anthropic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

const secretKey = "sk-ant-api03-secret"

// TestErrors covers what the shared suite does not: other statuses and
// error types, dropped connections, and the key never shown.
func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		fail   llmtest.Failure
		kind   llm.ErrorKind
		status int
		after  time.Duration
	}{
		{"permission", llmtest.Failure{Status: 403, Kind: llm.ErrAuth, Message: "no access to model"}, llm.ErrAuth, 403, 0},
		{"bad request", llmtest.Failure{Status: 400, Kind: llm.ErrBadRequest, Message: "messages: roles must alternate"}, llm.ErrBadRequest, 400, 0},
		{"prompt too long", llmtest.Failure{Status: 400, Kind: llm.ErrContextLength, Message: "210000 tokens > 200000 maximum"}, llm.ErrContextLength, 400, 0},
		{"request too large", llmtest.Failure{Status: 413, Kind: llm.ErrBadRequest, Message: "Request exceeds the maximum allowed number of bytes"}, llm.ErrContextLength, 413, 0},
		{"overloaded with Retry-After", llmtest.Failure{Status: 529, RetryAfter: "1.5", Kind: llm.ErrOverloaded, Message: "Overloaded"}, llm.ErrOverloaded, 529, 1500 * time.Millisecond},
		{"rate limit on a 400 body type", llmtest.Failure{Status: 400, Kind: llm.ErrRateLimit, Message: "slow down"}, llm.ErrRateLimit, 400, 0},
		{"connection dropped", llmtest.Failure{Kind: llm.ErrNetwork}, llm.ErrNetwork, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Anthropic{}, llmtest.Reply{Fail: &tc.fail})
			m, err := New(Config{APIKey: secretKey, BaseURL: srv.URL, Model: "claude-test"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = llm.Collect(m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("error %v (%T), want *llm.Error", err, err)
			}
			if e.Kind != tc.kind || e.Status != tc.status || e.RetryAfter != tc.after {
				t.Errorf("error %+v, want kind %s status %d retry-after %s", e, tc.kind, tc.status, tc.after)
			}
			if tc.fail.Message != "" && !strings.Contains(e.Msg, tc.fail.Message) {
				t.Errorf("message %q lost the provider's %q", e.Msg, tc.fail.Message)
			}
			if strings.Contains(e.Error(), secretKey) {
				t.Errorf("error leaks the key: %s", e)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	m, _ := New(Config{APIKey: secretKey, BaseURL: "http://127.0.0.1:1", Model: "claude-test"})
	_, err := llm.Collect(m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
	e, ok := llm.AsError(err)
	if !ok || e.Kind != llm.ErrNetwork {
		t.Fatalf("error %v, want ErrNetwork", err)
	}
	if strings.Contains(e.Error(), secretKey) {
		t.Errorf("error leaks the key: %s", e)
	}
}

func TestCancelledBeforeRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, _ := New(Config{APIKey: "k", BaseURL: "http://127.0.0.1:1", Model: "claude-test"})
	_, err := llm.Collect(m.Stream(ctx, llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, ok := llm.AsError(err); ok {
		t.Errorf("cancellation classified as a provider error: %v", err)
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	fail := llmtest.Failure{Status: 429, RetryAfter: now.Add(30 * time.Second).Format(http.TimeFormat), Kind: llm.ErrRateLimit, Message: "slow down"}
	srv := llmtest.Start(t, llmtest.Anthropic{}, llmtest.Reply{Fail: &fail})
	m, _ := New(Config{APIKey: "k", BaseURL: srv.URL, Model: "claude-test"})
	m.now = func() time.Time { return now }
	_, err := llm.Collect(m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
	if e, ok := llm.AsError(err); !ok || e.RetryAfter != 30*time.Second {
		t.Errorf("error %v, want Retry-After 30s", err)
	}
}

func TestCheckTool(t *testing.T) {
	obj := `{"type":"object","properties":{"a":{"type":"string"}}}`
	tests := []struct {
		name, tool, params string
		ok                 bool
	}{
		{"ordinary", "read_file", obj, true},
		{"dashes and digits", "web-search_2", obj, true},
		{"64 characters", strings.Repeat("a", 64), obj, true},
		{"no parameters", "now", ``, true},
		{"any keyword", "t", `{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}]}},"$defs":{},"oneOf":[{"required":["x"]}]}`, true},
		{"object without type", "t", `{"properties":{"a":{}}}`, true},
		{"empty name", "", obj, false},
		{"65 characters", strings.Repeat("a", 65), obj, false},
		{"dot", "fs.read", obj, false},
		{"space", "read file", obj, false},
		{"non-ASCII", "lire_fichié", obj, false},
		{"string schema", "t", `{"type":"string"}`, false},
		{"type list", "t", `{"type":["object","null"]}`, false},
		{"array", "t", `[]`, false},
		{"null", "t", `null`, false},
		{"not JSON", "t", `{"type":`, false},
		{"required not names", "t", `{"type":"object","required":"a"}`, false},
	}
	m, _ := New(Config{Model: "claude-test"})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.CheckTool(llm.ToolDef{Name: tc.tool, Parameters: []byte(tc.params)})
			if tc.ok != (err == nil) {
				t.Fatalf("CheckTool = %v, want ok %v", err, tc.ok)
			}
			if e, isErr := llm.AsError(err); err != nil && (!isErr || e.Kind != llm.ErrUnsupportedTool) {
				t.Errorf("error %v, want kind %s", err, llm.ErrUnsupportedTool)
			}
		})
	}
}

// TestHTTPClientTimeout: the configured client's own timeout, with the
// caller's context alive, is a network error the loop may retry.
func TestHTTPClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	m, _ := New(Config{APIKey: "k", BaseURL: srv.URL, Model: "claude-test", HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	_, err := llm.Collect(m.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}), nil)
	if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrNetwork {
		t.Errorf("error %v, want ErrNetwork", err)
	}
}
