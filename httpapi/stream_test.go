package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	ID    int
	Name  string
	Data  agent.Event
	Notes []string // comment lines before it
}

// readEvent reads the next event from an SSE stream as a browser's
// EventSource parser would: field lines until a blank line, comments
// (":…") kept aside. It returns io.EOF at the end of the stream.
func readEvent(t *testing.T, br *bufio.Reader) (sseEvent, error) {
	t.Helper()
	var ev sseEvent
	var data []string
	seen := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && (seen || line != "") {
				t.Fatalf("stream ended inside an event: %q", line)
			}
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if len(data) == 0 {
				continue // a comment-only block
			}
			if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &ev.Data); err != nil {
				t.Fatalf("event data %q: %v", data, err)
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
			ev.Notes = append(ev.Notes, strings.TrimSpace(line[1:]))
		default:
			seen = true
			field, value, _ := strings.Cut(line, ": ")
			switch field {
			case "id":
				ev.ID, err = strconv.Atoi(value)
				if err != nil {
					t.Fatalf("id %q", value)
				}
			case "event":
				ev.Name = value
			case "data":
				data = append(data, value)
			default:
				t.Fatalf("unknown SSE field in %q", line)
			}
		}
	}
}

// readAll reads events until the stream ends.
func readAll(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	br := bufio.NewReader(body)
	var evs []sseEvent
	for {
		ev, err := readEvent(t, br)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// open starts a streaming request and returns the response with its body
// unread; the caller closes it.
func (f *fixture) open(w *who, path string, body any, headers ...string) *http.Response {
	f.t.Helper()
	resp, err := noRedirect.Do(f.request(w, "POST", path, body, headers...))
	f.must(err)
	return resp
}

// openEvents opens GET path (an events stream) and returns the response with
// its body unread; the caller closes it.
func (f *fixture) openEvents(w *who, path string, headers ...string) *http.Response {
	f.t.Helper()
	resp, err := noRedirect.Do(f.request(w, "GET", path, nil, headers...))
	f.must(err)
	return resp
}

func kinds(evs []sseEvent) []string {
	var ks []string
	for _, ev := range evs {
		ks = append(ks, ev.Name)
	}
	return ks
}

func TestSendStreamsEvents(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")

	resp := f.open(f.bob, "/api/conversations/conv_bob/messages", map[string]any{"message": "convert 3"}, "X-Timezone: Asia/Tokyo")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readAll(t, resp.Body)
	// The two text deltas are gathered into one recorded event.
	want := []string{"text", "tool_call", "tool_result", "pause", "next_actions", "usage", "done"}
	if diff := cmp.Diff(want, kinds(evs)); diff != "" {
		t.Fatalf("event order (-want +got):\n%s", diff)
	}
	script := scriptedEvents("conv_bob")
	script[1].Text = script[0].Text + script[1].Text
	script = script[1:]
	for i, ev := range evs {
		if ev.ID != i+1 || string(ev.Data.Kind) != ev.Name {
			t.Errorf("event %d: id %d, name %q, data.type %q", i, ev.ID, ev.Name, ev.Data.Kind)
		}
		if diff := cmp.Diff(script[i], ev.Data); diff != "" {
			t.Errorf("event %d data (-want +got):\n%s", i, diff)
		}
	}

	got := f.eng.lastCall(t)
	want2 := sendCall{
		Caller:         httpapi.Caller{OrgID: "org_a", UserID: "bob", DisplayName: "Bob", Department: "R&D", Timezone: "Asia/Tokyo", Role: "member"},
		ConversationID: "conv_bob", Message: "convert 3",
	}
	if diff := cmp.Diff(want2, got); diff != "" {
		t.Errorf("engine call (-want +got):\n%s", diff)
	}

	// Without the header the stored zone applies.
	r := f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "again"})
	f.ok(r, 200, nil)
	if tz := f.eng.lastCall(t).Caller.Timezone; tz != "Europe/Paris" {
		t.Errorf("timezone %q, want the stored Europe/Paris", tz)
	}
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "x"}, "X-Timezone: Nowhere/Land"), 400, "bad_timezone")
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": ""}), 400, "invalid_request")
}

func TestSendErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	path := "/api/conversations/conv_bob/messages"

	r := f.do(f.bob, "POST", path, map[string]any{"message": "bad"})
	wantError(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(string(r.body), "no model is connected") {
		t.Errorf("a BadRequest's message is shown: %s", r.body)
	}

	wantError(t, f.do(f.bob, "POST", path, map[string]any{"message": "boom"}), http.StatusInternalServerError, "internal")
	if !strings.Contains(f.logs.String(), secretDetail) {
		t.Error("the internal error was not logged")
	}

	resp := f.open(f.bob, path, map[string]any{"message": "late-boom"})
	defer resp.Body.Close()
	evs := readAll(t, resp.Body)
	if diff := cmp.Diff([]string{"text", "error"}, kinds(evs)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if e := evs[1].Data; e.Error == "" || strings.Contains(e.Error, secretDetail) || e.ConversationID != "conv_bob" {
		t.Errorf("error event %+v", e)
	}
}

// TestCancel: POST …/cancel ends the stream with a done event whose stop
// is "cancelled": the engine's own when it sends one (as agent/loop.go
// does), one added when it stops without.
func TestCancel(t *testing.T) {
	for _, tc := range []struct {
		name, message string
		// want are the events after the first, the last being done.
		want []string
	}{
		{name: "engine ends with done", message: "block", want: []string{"done"}},
		{name: "engine stops without done", message: "block-bare", want: []string{"done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.conversation("org_a", "bob", "conv_bob")

			resp := f.open(f.bob, "/api/conversations/conv_bob/messages", map[string]any{"message": tc.message})
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			first, err := readEvent(t, br)
			f.must(err)
			if first.Name != "text" {
				t.Fatalf("first event %+v", first)
			}

			// The turn runs: visible, exclusive, and only its owner may cancel it.
			var c httpapi.Conversation
			f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob", nil), 200, &c)
			if !c.Running {
				t.Error("a running turn's conversation says running=false")
			}
			wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), http.StatusConflict, "turn_running")
			wantError(t, f.do(f.carol, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusNotFound, "not_found")
			wantError(t, f.do(f.dave, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusNotFound, "not_found")

			var out struct{ Cancelled bool }
			f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusAccepted, &out)
			if !out.Cancelled {
				t.Error("cancelled=false")
			}
			if err := <-f.eng.blocked; !errors.Is(err, runs.ErrCancelled) {
				t.Errorf("the turn's context ended with %v, want runs.ErrCancelled", err)
			}
			rest := readAll(t, br)
			if diff := cmp.Diff(tc.want, kinds(rest)); diff != "" {
				t.Fatalf("after cancel (-want +got):\n%s", diff)
			}
			last := rest[len(rest)-1]
			want := agent.Event{Kind: agent.EventDone, ConversationID: "conv_bob", TurnID: "turn_b", Stop: agent.StopCancelled}
			if diff := cmp.Diff(want, last.Data); diff != "" || last.ID != len(rest)+1 {
				t.Errorf("final event id %d (-want +got):\n%s", last.ID, diff)
			}

			wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusConflict, "not_running")
			f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob", nil), 200, &c)
			if c.Running {
				t.Error("running=true after the turn ended")
			}
			f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "hi"}), 200, nil)
		})
	}
}

// TestClosingTheStreamLeavesTheTurnRunning: a client that leaves stops
// nothing; the turn goes on, its events resume with GET .../events from
// the last id seen, and POST .../cancel still reaches it.
func TestClosingTheStreamLeavesTheTurnRunning(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	f.must(f.st.PutTurn(f.ctx, store.Turn{ID: "turn_b", OrgID: "org_a", UserID: "bob", ConversationID: "conv_bob",
		Agent: "helper", Status: store.TurnRunning, StartedAt: start}))
	ctx, cancel := context.WithCancel(f.ctx)
	req := f.request(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "block"}).WithContext(ctx)
	resp, err := noRedirect.Do(req)
	f.must(err)
	first, err := readEvent(t, bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()

	resumed := f.openEvents(f.bob, "/api/conversations/conv_bob/events?turn="+first.Data.TurnID, fmt.Sprintf("Last-Event-ID: %d", first.ID))
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		t.Fatalf("resume: status %d", resumed.StatusCode)
	}
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusAccepted, nil)
	if err := <-f.eng.blocked; !errors.Is(err, runs.ErrCancelled) {
		t.Errorf("the turn's context ended with %v, want runs.ErrCancelled (the cancel, not the client leaving)", err)
	}
	rest := readAll(t, resumed.Body)
	want := []sseEvent{{ID: first.ID + 1, Name: "done", Data: agent.Event{Kind: agent.EventDone, ConversationID: "conv_bob", TurnID: "turn_b", Stop: agent.StopCancelled}}}
	if diff := cmp.Diff(want, rest); diff != "" {
		t.Errorf("resumed stream (-want +got):\n%s", diff)
	}
}

// TestCancelBeforeAnyEvent: a turn cancelled before its first event still
// answers a stream, with done alone.
func TestCancelBeforeAnyEvent(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	done := make(chan response)
	go func() {
		done <- f.do(f.bob, "POST", "/api/conversations/conv_bob/messages", map[string]any{"message": "silent"})
	}()
	// The turn is registered before the engine is called, so retrying
	// the cancel until it lands is a wait on the server, not a sleep.
	for {
		r := f.do(f.bob, "POST", "/api/conversations/conv_bob/cancel", nil)
		if r.StatusCode == http.StatusAccepted {
			break
		}
		wantError(t, r, http.StatusConflict, "not_running")
	}
	<-f.eng.blocked
	r := <-done
	f.ok(r, http.StatusOK, nil)
	evs := readAll(t, strings.NewReader(string(r.body)))
	want := []sseEvent{{ID: 1, Name: "done", Data: agent.Event{Kind: agent.EventDone, ConversationID: "conv_bob", TurnID: "turn_b", Stop: agent.StopCancelled}}}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
}

func TestHeartbeat(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.Heartbeat = time.Millisecond })
	f.conversation("org_a", "bob", "conv_bob")
	resp := f.open(f.bob, "/api/conversations/conv_bob/messages", map[string]any{"message": "silent"})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	f.must(err)
	if line != ": keep-alive\n" {
		t.Fatalf("first line %q, want a keep-alive comment", line)
	}
	f.ok(f.do(f.bob, "POST", "/api/conversations/conv_bob/cancel", nil), http.StatusAccepted, nil)
	<-f.eng.blocked
	evs := readAll(t, br)
	if diff := cmp.Diff([]string{"done"}, kinds(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAnswer(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation("org_a", "bob", "conv_bob")
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/answer", map[string]any{"answer": "metres"}), http.StatusConflict, "not_paused")

	f.pause("org_a", "bob", "conv_bob")
	resp := f.open(f.bob, "/api/conversations/conv_bob/answer", map[string]any{"answer": "metres"})
	defer resp.Body.Close()
	evs := readAll(t, resp.Body)
	if len(evs) == 0 || evs[len(evs)-1].Name != "done" {
		t.Errorf("answer stream %v, want it to end with done", kinds(evs))
	}
	if got := f.eng.lastCall(t); got.Message != "metres" || got.ConversationID != "conv_bob" {
		t.Errorf("engine call %+v", got)
	}
	wantError(t, f.do(f.bob, "POST", "/api/conversations/conv_bob/answer", map[string]any{}), http.StatusBadRequest, "invalid_request")
}

func TestRateLimit(t *testing.T) {
	f := newFixture(t, func(c *httpapi.Config) { c.RateLimit = httpapi.RateLimit{Burst: 2, Every: time.Minute} })
	f.conversation("org_a", "bob", "conv_bob")
	f.conversation("org_a", "carol", "conv_carol")
	send := func(w *who, conv string) response {
		return f.do(w, "POST", "/api/conversations/"+conv+"/messages", map[string]any{"message": "hi"})
	}
	f.ok(send(f.bob, "conv_bob"), 200, nil)
	f.ok(send(f.bob, "conv_bob"), 200, nil)
	r := send(f.bob, "conv_bob")
	wantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra != "60" {
		t.Errorf("Retry-After %q, want 60", ra)
	}
	f.ok(send(f.carol, "conv_carol"), 200, nil) // buckets are per user

	f.clock.Advance(30 * time.Second)
	r = send(f.bob, "conv_bob")
	wantError(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra != "30" {
		t.Errorf("Retry-After %q after 30s, want 30", ra)
	}
	f.clock.Advance(30 * time.Second)
	f.ok(send(f.bob, "conv_bob"), 200, nil)
	wantError(t, send(f.bob, "conv_bob"), http.StatusTooManyRequests, "rate_limited")

	// Reading is not limited.
	f.ok(f.do(f.bob, "GET", "/api/conversations/conv_bob", nil), 200, nil)
}
