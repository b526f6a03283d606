package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// loadUsers is how many users each run one turn in their own conversation,
// all at once.
const loadUsers = 200

// goroutineSlack is how many goroutines may outlive a burst without being
// a leak, once the fake model has closed its idle keep-alive connections
// (Quiver's model client would keep up to 64 open). A leak of per-turn
// goroutines is hundreds.
const goroutineSlack = 10

// settleLimit bounds the wait for goroutines to exit after a burst.
const settleLimit = 10 * time.Second

// TestLoad200Conversations runs quiver serve in-process against a fake
// OpenAI server on loopback: 200 users each open a conversation, then all
// 200 send a message at once and read their event stream to done. Half of
// the turns call calculate first. Latencies and memory are reported, not
// asserted; correctness, concurrency and the absence of leaks are.
func TestLoad200Conversations(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: 200 concurrent turns")
	}
	r := runLoad(t, t, loadUsers)
	t.Log(summarise([]loadRound{r}).String())
}

// BenchmarkLoad200Conversations is TestLoad200Conversations as a
// benchmark: ns/op is one burst of 200 concurrent turns (set-up excluded),
// and the latencies, peaks and leftovers over every burst are metrics.
func BenchmarkLoad200Conversations(b *testing.B) {
	var rounds []loadRound
	// The fake model reports protocol mistakes on a *testing.T; a
	// benchmark has none, so it gets a detached one checked after each
	// round. A mistake also fails the turn, which the round asserts.
	for b.Loop() {
		ft := &testing.T{}
		rounds = append(rounds, runLoad(b, ft, loadUsers))
		if ft.Failed() {
			b.Error("the fake model saw a malformed request")
		}
	}
	summarise(rounds).report(b)
}

// loadRound is what one burst measured.
type loadRound struct {
	turns []turnSample  // by conversation, as the client saw them
	model []modelSample // by conversation, as the fake model served them
	// pre is before anything started; base is quiver serve idle with its
	// users and conversations; peak is the most seen while the streams
	// were open; after is the idle server once the goroutines settled;
	// stopped is after quiver serve and the fake model stopped.
	pre, base, peak, after, stopped procSample
	held                            int           // first model requests held at once
	wall                            time.Duration // the burst, barrier to last done
}

// turnSample is one turn seen by its client, from sending the message.
type turnSample struct {
	ttfe  time.Duration // to the first event
	total time.Duration // to the done event
}

// modelSample is the fake model's own serving of one conversation's turn.
type modelSample struct {
	ttfb     time.Duration // first request: arrival to its first byte
	total    time.Duration // every request: arrival to its last byte
	requests int
}

// procSample is the test process's goroutines and heap in use: quiver
// serve, the fake model and the clients together.
type procSample struct {
	goroutines int
	heapInuse  uint64
}

func readProc() procSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return procSample{goroutines: runtime.NumGoroutine(), heapInuse: ms.HeapInuse}
}

// readProcIdle is readProc after a collection: what is retained.
func readProcIdle() procSample {
	runtime.GC()
	return readProc()
}

// runLoad runs one burst of n concurrent turns and asserts on tb that each
// ended right, that all n streams were open at once, that the store holds
// the n turns done, and that the goroutines settle back. modelT receives
// the fake model's own complaints.
func runLoad(tb testing.TB, modelT *testing.T, n int) loadRound {
	// A benchmark times the burst only; b.Loop wants the timer running
	// again when the round returns.
	bench, _ := tb.(*testing.B)
	if bench != nil {
		bench.StopTimer()
		defer bench.StartTimer()
	}
	var r loadRound
	r.pre = readProcIdle()
	e := setUpLoad(tb, modelT, n)
	r.base = readProcIdle()
	e.peaks.start()
	if bench != nil {
		bench.StartTimer()
	}
	start := time.Now()
	results := e.client.burst(tb.Context(), e.convs, e.tokens, e.model.leave)
	r.wall = time.Since(start)
	if bench != nil {
		bench.StopTimer()
	}
	r.peak = e.peaks.stop()
	r.turns = checkTurns(tb, results)
	if r.model, r.held = e.model.samples(); r.held != n {
		tb.Errorf("%d of %d first model requests were in flight at once", r.held, n)
	}
	e.client.http.CloseIdleConnections()
	// Quiver keeps model connections alive for the next turns (its model
	// client pools up to 64 per host): legitimate, not a leak. The fake
	// closes its idle ones, which ends them on Quiver's side too.
	e.model.ts.Config.SetKeepAlivesEnabled(false)
	r.after = settle(tb, "with quiver serve idle after the burst", r.base.goroutines+goroutineSlack)
	e.tearDown(tb, results)
	r.stopped = settle(tb, "after quiver serve stopped", r.pre.goroutines+goroutineSlack)
	return r
}

// loadEnv is a round's quiver serve, fake model, users and conversations.
type loadEnv struct {
	model         *loadModel
	peaks         *peakSampler
	srv           loadServe
	st            *sqlite.Store // the same database, opened by the test
	client        *loadClient
	tokens, convs []string // by user
}

// setUpLoad starts the fake model and quiver serve, and gives each of n
// users an API token and a conversation with the assistant.
func setUpLoad(tb testing.TB, modelT *testing.T, n int) *loadEnv {
	e := &loadEnv{peaks: &peakSampler{}}
	e.model = startLoadModel(modelT, n, e.peaks.sample)
	tb.Cleanup(e.model.Close) // after quiver serve's own cleanup; Close is idempotent
	data := tb.TempDir()
	// The test measures a bounded queue, not shedding: new turns may wait
	// for SQLite's writer as long as a turn may (under -race on two busy
	// cores, 200 claims at once queue for seconds), where the default
	// (1s) would refuse some with 503.
	cfg := filepath.Join(tb.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("turns:\n  admit_wait: 1m\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	e.srv = startLoadServe(tb, data, e.model.URL(), "--config", cfg)
	var err error
	if e.st, err = sqlite.Open(tb.Context(), data); err != nil {
		tb.Fatal(err)
	}
	e.tokens = seedUsers(tb, e.st, n)
	e.client = &loadClient{base: e.srv.base, http: &http.Client{Transport: &http.Transport{}}}
	e.convs = e.client.openConversations(tb, e.tokens)
	e.client.http.CloseIdleConnections()
	return e
}

// tearDown stops quiver serve, checks what it stored, and closes the rest.
func (e *loadEnv) tearDown(tb testing.TB, results []turnResult) {
	if code := e.srv.stop(); code != 0 {
		tb.Errorf("quiver serve exited %d", code)
	}
	checkStored(tb, e.st, results)
	e.st.Close()
	e.model.Close()
}

// settle polls until at most want goroutines run (a failure after
// settleLimit), then samples the process.
func settle(tb testing.TB, when string, want int) procSample {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(settleLimit)
	for runtime.NumGoroutine() > want && time.Now().Before(deadline) {
		<-tick.C
	}
	p := readProcIdle()
	if p.goroutines > want {
		// The stacks, grouped, say which goroutines stayed: a failure
		// on a loaded machine is then diagnosable from its log alone.
		var stacks strings.Builder
		pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		tb.Errorf("%d goroutines %s, want at most %d; goroutines:\n%s", p.goroutines, when, want, stacks.String())
	}
	return p
}

// loadServe is a running quiver serve.
type loadServe struct {
	base string
	stop func() int
}

// startLoadServe runs "quiver serve" with flags on a free loopback port
// over data, with the fake model behind OPENAI_BASE_URL, and waits for
// its address. Logs are formatted and discarded, as a deployment pays for
// formatting.
func startLoadServe(tb testing.TB, data, modelURL string, flags ...string) loadServe {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	env := app.Env{
		Stdout: io.Discard, Stderr: pw, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: func(k string) string {
			return map[string]string{"QUIVER_DATA": data, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": modelURL}[k]
		},
	}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...), env)
		pw.Close()
	}()
	servingRe := regexp.MustCompile(`serving (http://\S+)`)
	var s loadServe
	sc := bufio.NewScanner(pr)
	for s.base == "" && sc.Scan() {
		if m := servingRe.FindStringSubmatch(sc.Text()); m != nil {
			s.base = m[1]
		}
	}
	if s.base == "" {
		cancel()
		tb.Fatalf("serve printed no address (exit %d)", <-done)
	}
	go io.Copy(io.Discard, pr)
	var once sync.Once
	code := 0
	s.stop = func() int { once.Do(func() { cancel(); code = <-done }); return code }
	tb.Cleanup(func() { s.stop() })
	return s
}

// seedUsers creates n members of the first start's organisation, each
// with an API token, in the store quiver serve runs on.
func seedUsers(tb testing.TB, st store.Accounts, n int) []string {
	ctx, now := tb.Context(), time.Now().UTC()
	tokens := make([]string, n)
	for i := range n {
		u := store.User{ID: fmt.Sprintf("u%03d", i), OrgID: "default", DisplayName: "Load " + strconv.Itoa(i), Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}
		if err := st.CreateUser(ctx, u); err != nil {
			tb.Fatalf("create user %s: %v", u.ID, err)
		}
		tok, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredAPIToken, OrgID: u.OrgID, UserID: u.ID, Label: "load", CreatedAt: now})
		if err != nil {
			tb.Fatalf("token for %s: %v", u.ID, err)
		}
		tokens[i] = tok
	}
	return tokens
}

// label names conversation i in its messages; the fake model finds it there.
func label(i int) string { return fmt.Sprintf("load-%03d", i) }

var labelRe = regexp.MustCompile(`load-(\d{3})`)

// convIndex is the conversation a text names, or -1.
func convIndex(s string) int {
	m := labelRe.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	i, _ := strconv.Atoi(m[1])
	return i
}

// question is conversation i's message; odd ones are answered with
// calculate's result.
func question(i int) string { return fmt.Sprintf("%s: what is %d * 3 + 1?", label(i), i) }

// wantText is the answer conversation i must stream.
func wantText(i int) string {
	if i%2 == 1 {
		return fmt.Sprintf("%s: the answer is %d.", label(i), i*3+1)
	}
	return label(i) + ": hello from the fake model."
}

// loadReply answers a model request from the conversation's own history:
// an odd conversation first calls calculate, then repeats its result; an
// even one answers at once. Text comes in a few deltas.
func loadReply(req llm.Request) llmtest.Reply {
	var users strings.Builder
	for _, m := range req.Messages {
		if m.Role == llm.User {
			users.WriteString(m.Text)
		}
	}
	i := convIndex(users.String())
	usage := llm.Usage{InputTokens: 900, OutputTokens: 12}
	if last := req.Messages[len(req.Messages)-1]; last.Role == llm.Tool && len(last.Results) == 1 {
		return llmtest.Reply{Text: []string{label(i), ": the answer ", "is ", last.Results[0].Content, "."}, Usage: usage}
	}
	if i%2 == 1 {
		call := llmtest.Call("c1", "calculate", map[string]string{"expression": fmt.Sprintf("%d * 3 + 1", i)})
		return llmtest.Reply{ToolCalls: []llm.ToolCall{call}, Usage: usage}
	}
	return llmtest.Reply{Text: []string{label(i), ": hello ", "from the ", "fake model."}, Usage: usage}
}

// loadModel is the fake OpenAI server of the load test. It times its own
// serving of each request and holds each conversation's first request
// until every conversation's has arrived (or its client gave up), so all
// streams are open at once when the model starts answering.
type loadModel struct {
	ts *httptest.Server
	n  int
	// onFull is called once, with the first requests held, before they go
	// on.
	onFull func()

	mu      sync.Mutex
	byConv  []modelSample
	arrived []bool
	count   int // first requests arrived, or given up on
	held    int // first requests arrived
	heldAll int // held when the gate opened
	open    chan struct{}
}

// startLoadModel starts the fake for n conversations; onFull is called
// with every first request held, before the gate opens.
func startLoadModel(t *testing.T, n int, onFull func()) *loadModel {
	m := &loadModel{n: n, onFull: onFull, byConv: make([]modelSample, n), arrived: make([]bool, n), open: make(chan struct{})}
	fake := llmtest.OpenAI{}.Handler(t, func(s llmtest.Seen) llmtest.Reply { return loadReply(s.Req) })
	m.ts = httptest.NewServer(m.timed(fake))
	return m
}

func (m *loadModel) URL() string { return m.ts.URL }

// Close shuts the server down, closing its connections.
func (m *loadModel) Close() {
	m.ts.CloseClientConnections()
	m.ts.Close()
}

// timed wraps the fake: it finds the conversation in the request, holds a
// first request at the gate, and records arrival to first and last byte.
func (m *loadModel) timed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrival := time.Now()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		i := convIndex(string(body))
		if m.arrive(i) {
			<-m.open
		}
		tw := &firstByteWriter{ResponseWriter: w}
		next.ServeHTTP(tw, r)
		m.record(i, tw.first.Sub(arrival), time.Since(arrival))
	})
}

// arrive reports whether this is conversation i's first request, which
// waits for the gate.
func (m *loadModel) arrive(i int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 || i >= m.n || m.arrived[i] {
		return false
	}
	m.arrived[i] = true
	m.held++
	m.count++
	m.openIfFull()
	return true
}

// leave is called when conversation i's turn ended: if its first request
// never came, the gate stops waiting for it.
func (m *loadModel) leave(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.arrived[i] {
		m.arrived[i] = true
		m.count++
		m.openIfFull()
	}
}

// openIfFull opens the gate once every conversation is accounted for;
// m.mu is held.
func (m *loadModel) openIfFull() {
	if m.count != m.n {
		return
	}
	m.heldAll = m.held
	m.onFull()
	close(m.open)
}

func (m *loadModel) record(i int, ttfb, total time.Duration) {
	if i < 0 || i >= m.n {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &m.byConv[i]
	if s.requests == 0 {
		s.ttfb = ttfb
	}
	s.total += total
	s.requests++
}

// samples returns the per-conversation timings and how many first
// requests were held at once.
func (m *loadModel) samples() ([]modelSample, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.byConv), m.heldAll
}

// firstByteWriter notes when the first byte of a response is written.
type firstByteWriter struct {
	http.ResponseWriter
	first time.Time
}

func (w *firstByteWriter) Write(b []byte) (int, error) {
	if w.first.IsZero() {
		w.first = time.Now()
	}
	return w.ResponseWriter.Write(b)
}

func (w *firstByteWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// loadClient calls the API as the load test's users.
type loadClient struct {
	base string
	http *http.Client
}

func (c *loadClient) request(ctx context.Context, path, token, body string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(body))
	if err != nil {
		panic(err) // a test bug: the URL is built here
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// openConversations creates one conversation with the assistant per user.
func (c *loadClient) openConversations(tb testing.TB, tokens []string) []string {
	ids := make([]string, len(tokens))
	for i, tok := range tokens {
		resp, err := c.http.Do(c.request(tb.Context(), "/api/conversations", tok, `{"agent":"assistant"}`))
		if err != nil {
			tb.Fatal(err)
		}
		var conv struct {
			ID string `json:"id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&conv)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || err != nil || conv.ID == "" {
			tb.Fatalf("create conversation for user %d: %d %v", i, resp.StatusCode, err)
		}
		ids[i] = conv.ID
	}
	return ids
}

// turnResult is one turn's stream as its client read it.
type turnResult struct {
	sample  turnSample
	kinds   []string // event types, in order
	text    string   // the text deltas joined
	results []string // each tool result as "content error=bool"
	turnID  string
	err     error
}

// burst sends every conversation's message at once — each client waits
// behind a barrier until all are ready — and reads each stream to its end.
// ended is called as each turn ends.
func (c *loadClient) burst(ctx context.Context, convs, tokens []string, ended func(int)) []turnResult {
	out := make([]turnResult, len(convs))
	var ready, finished sync.WaitGroup
	start := make(chan struct{})
	for i := range convs {
		ready.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			req := c.request(ctx, "/api/conversations/"+convs[i]+"/messages", tokens[i], fmt.Sprintf(`{"message":%q}`, question(i)))
			ready.Done()
			<-start
			out[i] = c.streamTurn(req)
			ended(i)
		}()
	}
	ready.Wait()
	close(start)
	finished.Wait()
	return out
}

// streamTurn sends req and reads its event stream to the end.
func (c *loadClient) streamTurn(req *http.Request) turnResult {
	t0 := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return turnResult{err: fmt.Errorf("send: %w", err)}
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return turnResult{err: fmt.Errorf("send: %d %s %s", resp.StatusCode, ct, b)}
	}
	return readTurn(resp.Body, t0)
}

// sseEvent is the part of an event's data the load test reads.
type sseEvent struct {
	Type   string `json:"type"`
	TurnID string `json:"turn_id"`
	Text   string `json:"text"`
	Error  string `json:"error"`
	Result *struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	} `json:"result"`
}

// readTurn reads SSE data lines until the stream ends, noting when the
// first event and the done event came.
func readTurn(body io.Reader, t0 time.Time) turnResult {
	var r turnResult
	var text strings.Builder
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if r.kinds == nil {
			r.sample.ttfe = time.Since(t0)
		}
		var ev sseEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			r.err = fmt.Errorf("event %q: %w", line, err)
			return r
		}
		r.kinds = append(r.kinds, ev.Type)
		r.turnID = ev.TurnID
		switch ev.Type {
		case "text":
			text.WriteString(ev.Text)
		case "tool_result":
			r.results = append(r.results, fmt.Sprintf("%s error=%t", ev.Result.Content, ev.Result.IsError))
		case "done":
			r.sample.total = time.Since(t0)
		case "error":
			r.err = fmt.Errorf("error event: %s", ev.Error)
		}
	}
	r.text = text.String()
	if err := sc.Err(); err != nil && r.err == nil {
		r.err = fmt.Errorf("read stream: %w", err)
	}
	return r
}

// checkTurns asserts every turn streamed its right answer and ended with
// done, and returns the client-side samples.
func checkTurns(tb testing.TB, results []turnResult) []turnSample {
	tb.Helper()
	samples := make([]turnSample, len(results))
	failed := 0
	for i, r := range results {
		samples[i] = r.sample
		if err := checkTurn(i, r); err != nil {
			if failed++; failed <= 5 {
				tb.Errorf("conversation %d: %v", i, err)
			}
		}
	}
	if failed > 0 {
		tb.Errorf("%d of %d turns failed", failed, len(results))
	}
	return samples
}

func checkTurn(i int, r turnResult) error {
	if r.err != nil {
		return r.err
	}
	if len(r.kinds) == 0 || r.kinds[len(r.kinds)-1] != "done" {
		return fmt.Errorf("events %v do not end with done", r.kinds)
	}
	if r.text != wantText(i) {
		return fmt.Errorf("text %q, want %q", r.text, wantText(i))
	}
	var want []string
	if i%2 == 1 {
		want = []string{fmt.Sprintf("%d error=false", i*3+1)}
	}
	if !slices.Equal(r.results, want) {
		return fmt.Errorf("tool results %q, want %q", r.results, want)
	}
	return nil
}

// checkStored asserts the store holds every streamed turn, done.
func checkStored(tb testing.TB, st store.Turns, results []turnResult) {
	tb.Helper()
	done, bad := 0, 0
	for _, r := range results {
		if r.turnID == "" {
			continue
		}
		t, err := st.GetTurn(tb.Context(), "default", r.turnID)
		if err == nil && t.Status == store.TurnDone {
			done++
		} else if bad++; bad <= 5 {
			tb.Errorf("turn %s: status %q, %v", r.turnID, t.Status, err)
		}
	}
	if done != len(results) {
		tb.Errorf("the store holds %d turns done, want %d", done, len(results))
	}
}

// peakSampler records the most goroutines and heap in use seen: every few
// milliseconds between start and stop, and at each call of sample. The
// zero value is ready.
type peakSampler struct {
	mu   sync.Mutex
	peak procSample
	quit chan struct{}
	done chan struct{}
}

func (p *peakSampler) start() {
	p.quit, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-tick.C:
				p.sample()
			}
		}
	}()
}

func (p *peakSampler) sample() {
	s := readProc()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peak.goroutines = max(p.peak.goroutines, s.goroutines)
	p.peak.heapInuse = max(p.peak.heapInuse, s.heapInuse)
}

func (p *peakSampler) stop() procSample {
	close(p.quit)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// loadSummary is the percentiles and extremes over one or more rounds.
type loadSummary struct {
	turns, rounds                                   int
	ttfe, total, modelTTFB, model, addedTTFE, added percentiles
	base, peak, after, stopped                      procSample // peak and after: the worst round
	left                                            int        // goroutines after minus idle, worst round
	wall                                            time.Duration
}

// percentiles are p50 and p99 by nearest rank.
type percentiles struct{ p50, p99 time.Duration }

func percentilesOf(ds []time.Duration) percentiles {
	s := slices.Sorted(slices.Values(ds))
	rank := func(p float64) time.Duration { return s[max(0, int(math.Ceil(p*float64(len(s))))-1)] }
	return percentiles{rank(0.50), rank(0.99)}
}

// summarise pools every round's turns; added latency is per turn, the
// client's time minus the model's own for that turn.
func summarise(rounds []loadRound) loadSummary {
	var ttfe, total, mTTFB, mTotal, addTTFE, add []time.Duration
	s := loadSummary{rounds: len(rounds), base: rounds[0].base}
	for _, r := range rounds {
		for i, t := range r.turns {
			m := r.model[i]
			ttfe, total = append(ttfe, t.ttfe), append(total, t.total)
			mTTFB, mTotal = append(mTTFB, m.ttfb), append(mTotal, m.total)
			addTTFE, add = append(addTTFE, t.ttfe-m.ttfb), append(add, t.total-m.total)
		}
		s.turns += len(r.turns)
		s.wall += r.wall
		s.peak.goroutines = max(s.peak.goroutines, r.peak.goroutines)
		s.peak.heapInuse = max(s.peak.heapInuse, r.peak.heapInuse)
		s.after.goroutines = max(s.after.goroutines, r.after.goroutines)
		s.after.heapInuse = max(s.after.heapInuse, r.after.heapInuse)
		s.stopped = r.stopped
		s.left = max(s.left, r.after.goroutines-r.base.goroutines)
	}
	s.ttfe, s.total = percentilesOf(ttfe), percentilesOf(total)
	s.modelTTFB, s.model = percentilesOf(mTTFB), percentilesOf(mTotal)
	s.addedTTFE, s.added = percentilesOf(addTTFE), percentilesOf(add)
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(b uint64) float64       { return float64(b) / (1 << 20) }

func (s loadSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d turns in %d round(s), %d at once: %.0f ms a round, %.0f turns/s\n", s.turns, s.rounds, s.turns/s.rounds, ms(s.wall)/float64(s.rounds), float64(s.turns)/s.wall.Seconds())
	fmt.Fprintf(&b, "%-32s %10s %10s\n", "", "p50 ms", "p99 ms")
	for _, row := range []struct {
		name string
		p    percentiles
	}{
		{"client: time to first event", s.ttfe}, {"model: time to first byte", s.modelTTFB}, {"added: time to first event", s.addedTTFE},
		{"client: turn", s.total}, {"model: serving, per turn", s.model}, {"added: turn", s.added},
	} {
		fmt.Fprintf(&b, "%-32s %10.1f %10.1f\n", row.name, ms(row.p.p50), ms(row.p.p99))
	}
	fmt.Fprintf(&b, "process (server + fake model + clients): goroutines %d idle, %d peak, %d after, %d stopped; heap in use %.1f MiB idle, %.1f MiB peak, %.1f MiB after\n",
		s.base.goroutines, s.peak.goroutines, s.after.goroutines, s.stopped.goroutines, mib(s.base.heapInuse), mib(s.peak.heapInuse), mib(s.after.heapInuse))
	return b.String()
}

func (s loadSummary) report(b *testing.B) {
	for _, m := range []struct {
		v    float64
		unit string
	}{
		{ms(s.ttfe.p50), "ttfe-p50-ms"}, {ms(s.ttfe.p99), "ttfe-p99-ms"},
		{ms(s.total.p50), "turn-p50-ms"}, {ms(s.total.p99), "turn-p99-ms"},
		{ms(s.modelTTFB.p99), "model-ttfb-p99-ms"}, {ms(s.model.p99), "model-turn-p99-ms"},
		{ms(s.addedTTFE.p50), "added-ttfe-p50-ms"}, {ms(s.addedTTFE.p99), "added-ttfe-p99-ms"},
		{ms(s.added.p50), "added-turn-p50-ms"}, {ms(s.added.p99), "added-turn-p99-ms"},
		{mib(s.peak.heapInuse), "peak-heap-MiB"}, {float64(s.peak.goroutines), "peak-goroutines"},
		{float64(s.left), "goroutines-left"},
		{float64(s.turns) / s.wall.Seconds(), "turns/s"},
	} {
		b.ReportMetric(m.v, m.unit)
	}
	b.Log(s.String())
}
