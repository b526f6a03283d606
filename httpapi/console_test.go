package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/httpapi"
)

func TestConsoleTools(t *testing.T) {
	f := newFixture(t, nil)
	var out struct{ Tools []httpapi.ConsoleTool }
	f.ok(f.do(f.bob, "GET", "/api/console/tools?agent=helper", nil, "X-Timezone: Asia/Tokyo"), http.StatusOK, &out)
	if diff := cmp.Diff(fakeConsoleTools, out.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if c := f.eng.consoleCallers[0]; c.UserID != "bob" || c.OrgID != "org_a" || c.Timezone != "Asia/Tokyo" {
		t.Errorf("asked as %+v", c)
	}
	r := f.do(f.bob, "GET", "/api/console/tools?agent=only-a", nil)
	f.ok(r, http.StatusOK, nil)
	if !strings.Contains(string(r.body), `"tools":[]`) {
		t.Errorf("no tools is %s, want []", r.body)
	}
	wantError(t, f.do(f.bob, "GET", "/api/console/tools?agent=nope", nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.bob, "GET", "/api/console/tools", nil), http.StatusBadRequest, "invalid_request")
}

func TestConsoleRun(t *testing.T) {
	f := newFixture(t, nil)
	run := func(body any) response { return f.do(f.bob, "POST", "/api/console/run", body) }

	for _, tc := range []struct {
		name     string
		body     string
		want     httpapi.ToolRun
		wantArgs string
	}{
		{
			name:     "result",
			body:     `{"agent":"helper","tool":"calculate","arguments":{"expression":"1+1"}}`,
			want:     httpapi.ToolRun{Tool: "calculate", Result: "2", DurationMS: 3},
			wantArgs: `{"expression":"1+1"}`,
		},
		{
			name:     "arguments default to {}",
			body:     `{"agent":"helper","tool":"calculate"}`,
			want:     httpapi.ToolRun{Tool: "calculate", Result: "expression is required", IsError: true, DurationMS: 1},
			wantArgs: `{}`,
		},
		{
			name:     "null is absent",
			body:     `{"agent":"helper","tool":"calculate","arguments":null}`,
			want:     httpapi.ToolRun{Tool: "calculate", Result: "expression is required", IsError: true, DurationMS: 1},
			wantArgs: `{}`,
		},
		{
			name:     "numbers reach the tool as written",
			body:     `{"agent":"helper","tool":"calculate","arguments":{"n":12345678901234567890.50}}`,
			want:     httpapi.ToolRun{Tool: "calculate", Result: "expression is required", IsError: true, DurationMS: 1},
			wantArgs: `{"n":12345678901234567890.50}`,
		},
		{
			name:     "a tool's failure is a result",
			body:     `{"agent":"helper","tool":"fail","arguments":{}}`,
			want:     httpapi.ToolRun{Tool: "fail", Result: "the tool failed", IsError: true, DurationMS: 1},
			wantArgs: `{}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got httpapi.ToolRun
			f.ok(run(tc.body), http.StatusOK, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("run (-want +got):\n%s", diff)
			}
			call, _ := f.eng.lastRun()
			if call.Args != tc.wantArgs || call.Agent != "helper" || call.Caller.UserID != "bob" || call.Caller.OrgID != "org_a" {
				t.Errorf("engine call %+v, want args %s", call, tc.wantArgs)
			}
		})
	}

	r := run(map[string]any{"agent": "helper", "tool": "nope"})
	wantError(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(string(r.body), "not in the toolset") {
		t.Errorf("the engine's reason is not shown: %s", r.body)
	}
	wantError(t, run(map[string]any{"agent": "helper", "tool": "boom"}), http.StatusInternalServerError, "internal")
	wantError(t, run(map[string]any{"agent": "nope", "tool": "calculate"}), http.StatusNotFound, "not_found")
	for _, args := range []string{`[1]`, `"x"`, `3`, `true`} {
		wantError(t, run(`{"agent":"helper","tool":"calculate","arguments":`+args+`}`), http.StatusBadRequest, "invalid_request")
	}
	wantError(t, run(map[string]any{"agent": "helper"}), http.StatusBadRequest, "invalid_request")
}

// TestConsoleRateLimit: console runs and messages share one bucket.
func TestConsoleRateLimit(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.RateLimit = httpapi.RateLimit{Burst: 2, Every: time.Minute} })
	f.conversation("org_a", "bob", "conv_bob")
	body := map[string]any{"agent": "helper", "tool": "calculate", "arguments": map[string]any{"expression": "1+1"}}
	f.ok(f.do(f.bob, "POST", "/api/console/run", body), http.StatusOK, nil)
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusOK, nil)
	r := f.do(f.bob, "POST", "/api/console/run", body)
	wantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra != "60" {
		t.Errorf("Retry-After %q, want 60", ra)
	}
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusTooManyRequests, "rate_limited")
	f.ok(f.do(f.carol, "POST", "/api/console/run", body), http.StatusOK, nil) // buckets are per user
	f.ok(f.do(f.bob, "GET", "/api/console/tools?agent=helper", nil), http.StatusOK, nil)
	f.clock.Advance(time.Minute)
	f.ok(f.do(f.bob, "POST", "/api/console/run", body), http.StatusOK, nil)
}
