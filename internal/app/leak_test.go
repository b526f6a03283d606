package app_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store/sqlite"
)

// leakKinds are the turns TestTurnsLeaveNoGoroutine runs, one
// conversation each, all at once: conversation i runs leakKinds[i %
// len(leakKinds)].
var leakKinds = []string{
	"text",       // answered at once
	"tool",       // calculate, then the answer
	"disconnect", // the client stops reading after the first event; the turn goes on
	"stall",      // the model's first answer is headers and then nothing: the idle deadline ends it, the retry is answered
}

// leakMessageRe finds a leak turn's kind and conversation in what the
// model is sent.
var leakMessageRe = regexp.MustCompile(`leak-([a-z]+) #(\d+)`)

// TestTurnsLeaveNoGoroutine runs quiver serve in-process, lets a warm-up
// turn start whatever lives as long as the server (the database's
// connection openers, the model client's pool), and then runs a burst of
// turns of every kind in leakKinds. Once the turns have ended and the
// idle connections on both sides are closed, every goroutine the burst
// started must have ended: goleak compares the goroutines against the
// ones that ran before the burst, by stack, waiting for those on their
// way out.
func TestTurnsLeaveNoGoroutine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts quiver serve and runs 12 turns, three of them stalled for a second")
	}
	model := startLeakModel(t)
	data := t.TempDir()
	cfg := filepath.Join(data, "quiver.yaml")
	// The shortest idle deadline the config allows, so the stalled turn
	// ends within a second.
	if err := os.WriteFile(cfg, []byte("turns: {model_idle: 1s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startLoadServe(t, data, model.ts.URL, "--config", cfg)
	st, err := sqlite.Open(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 3 * len(leakKinds)
	tokens := seedUsers(t, st, n+1)
	client := &loadClient{base: srv.base, http: &http.Client{Transport: &http.Transport{}}}
	convs := client.openConversations(t, tokens)

	// The warm-up: a turn with a tool call, in a conversation of its own.
	warm := client.streamTurn(client.request(t.Context(), "/api/conversations/"+convs[n]+"/messages", tokens[n], `{"message":"leak-tool: warm up"}`))
	if warm.err != nil {
		t.Fatalf("warm-up turn: %v", warm.err)
	}
	quiesce(client, model)
	before := goleak.IgnoreCurrent()

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = client.leakTurn(t.Context(), convs[i], tokens[i], i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("turn %d (%s): %v", i, leakKinds[i%len(leakKinds)], err)
		}
	}
	// A disconnected client's turn runs on; it is over when its
	// conversation takes the next message (409 while it runs would fail
	// the turn below, so wait for the model to have answered it).
	model.waitDisconnected(n / len(leakKinds))
	quiesce(client, model)
	if err := findLeaks(before); err != nil {
		t.Errorf("the burst left goroutines behind:\n%v", err)
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("quiver serve exited %d", code)
	}
}

// findLeaks is goleak.Find(before), asked again until it finds nothing
// or settleLimit passes: goroutines on their way out (a turn a
// disconnected client left still writing its end) are given the time to
// end; one that stays is a leak.
func findLeaks(before goleak.Option) error {
	deadline := time.Now().Add(settleLimit)
	for {
		err := goleak.Find(before)
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// quiesce closes the idle connections on both sides of quiver serve: the
// client's into it and the fake model's (so Quiver's model client's
// pooled connections, kept by design, end too).
func quiesce(c *loadClient, m *leakModel) {
	c.http.CloseIdleConnections()
	m.ts.CloseClientConnections()
}

// leakTurn runs conversation i's turn and checks how its stream ended.
func (c *loadClient) leakTurn(ctx context.Context, conv, token string, i int) error {
	kind := leakKinds[i%len(leakKinds)]
	req := c.request(ctx, "/api/conversations/"+conv+"/messages", token, fmt.Sprintf(`{"message":"leak-%s #%d: go"}`, kind, i))
	if kind == "disconnect" {
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		// The first event, then nothing more is read.
		_, err = bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close()
		return err
	}
	r := c.streamTurn(req)
	if r.err == nil && !slices.Contains(r.kinds, "done") {
		r.err = fmt.Errorf("events %v have no done", r.kinds)
	}
	return r.err
}

// leakModel is a fake OpenAI server answering each turn by the kind its
// message names.
type leakModel struct {
	ts *httptest.Server

	mu           sync.Mutex
	cond         *sync.Cond
	disconnected int             // "disconnect" turns answered to their end
	stalled      map[string]bool // "stall" conversations whose first request stalled
}

// startLeakModel starts the fake; it is closed when t ends.
func startLeakModel(t *testing.T) *leakModel {
	m := &leakModel{stalled: map[string]bool{}}
	m.cond = sync.NewCond(&m.mu)
	fake := llmtest.OpenAI{}.Handler(t, func(s llmtest.Seen) llmtest.Reply {
		last := s.Req.Messages[len(s.Req.Messages)-1]
		if len(last.Results) > 0 {
			return llmtest.Reply{Text: []string{"the answer ", "is ", last.Results[0].Content}}
		}
		if strings.HasPrefix(last.Text, "leak-tool") {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.Call("c1", "calculate", map[string]string{"expression": "6 * 7"})}}
		}
		return llmtest.Reply{Text: []string{"hello ", "from the ", "fake model"}}
	})
	m.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		kind, conv := "", ""
		if sm := leakMessageRe.FindSubmatch(body); sm != nil {
			kind, conv = string(sm[1]), string(sm[2])
		}
		switch {
		case kind == "stall" && m.stall(conv):
			// Headers, then silence until Quiver gives up on the stream.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case kind == "disconnect":
			fake.ServeHTTP(w, r)
			m.mu.Lock()
			m.disconnected++
			m.cond.Broadcast()
			m.mu.Unlock()
		default:
			fake.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		m.ts.CloseClientConnections()
		m.ts.Close()
	})
	return m
}

// stall reports whether conversation conv's request is its first, which
// stalls.
func (m *leakModel) stall(conv string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	first := !m.stalled[conv]
	m.stalled[conv] = true
	return first
}

// waitDisconnected waits until n "disconnect" turns were answered.
func (m *leakModel) waitDisconnected(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.disconnected < n {
		m.cond.Wait()
	}
}
