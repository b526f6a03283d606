package webui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/browsertest"
)

// The browser tests drive the pages in a real headless Chromium against
// stubAPI (stub_test.go) through internal/browsertest. Every test fails on
// a JavaScript exception, a Content-Security-Policy violation, a console
// error, a server error or a request that leaves the test server, and
// saves screenshots to $QUIVER_ARTIFACTS/webui (default: the test's
// temporary directory).

// testZone is the browser's emulated timezone; every API request must
// carry it in X-Timezone.
const testZone = "Europe/Paris"

// request is one API request the page sent, and the status it got (0
// until the response starts).
type request struct {
	Method, Path, Query string
	CSRF, Timezone      string
	Body                map[string]any
	Status              int
}

// recorder passes requests to next and keeps every API request, and the
// body of its response.
type recorder struct {
	next      http.Handler
	mu        sync.Mutex
	requests  []request
	responses []*bytes.Buffer // by the index of requests
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		rc.next.ServeHTTP(w, r)
		return
	}
	rec := request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		CSRF: r.Header.Get("X-CSRF-Token"), Timezone: r.Header.Get("X-Timezone")}
	if r.Body != nil {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		_ = json.Unmarshal(raw, &rec.Body)
	}
	rc.mu.Lock()
	rc.requests = append(rc.requests, rec)
	rc.responses = append(rc.responses, new(bytes.Buffer))
	i := len(rc.requests) - 1
	rc.mu.Unlock()
	rc.next.ServeHTTP(&statusWriter{ResponseWriter: w, rc: rc, i: i}, r)
}

// statusWriter notes the response's status in the recorded request.
type statusWriter struct {
	http.ResponseWriter
	rc      *recorder
	i       int
	written bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.written {
		w.written = true
		w.rc.mu.Lock()
		w.rc.requests[w.i].Status = code
		w.rc.mu.Unlock()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	w.rc.mu.Lock()
	w.rc.responses[w.i].Write(b)
	w.rc.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

// Flush and Unwrap keep event streams streaming.
func (w *statusWriter) Flush()                      { http.NewResponseController(w.ResponseWriter).Flush() }
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (rc *recorder) recorded() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.requests)
}

// exchange is a recorded request with the response body it got so far.
type exchange struct {
	request
	Response string
}

// exchanges returns every recorded API request with its response body.
func (rc *recorder) exchanges() []exchange {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]exchange, len(rc.requests))
	for i, r := range rc.requests {
		out[i] = exchange{request: r, Response: rc.responses[i].String()}
	}
	return out
}

// browser is one headless Chromium tab (browsertest's) on a test server.
type browser struct {
	*browsertest.Browser
	t   *testing.T
	srv *httptest.Server
	rec *recorder
}

// newBrowser starts a test server that serves h, recording its API
// requests, and Chromium on a fresh profile in testZone that may request
// only that server.
func newBrowser(t *testing.T, h http.Handler) *browser {
	t.Helper()
	rec := &recorder{next: h}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close) // after the browser is gone: Close waits for open streams
	b := browsertest.New(t, browsertest.Config{Origin: srv.URL, Timezone: testZone,
		Artifacts: artifactDir(), Lifetime: 2 * time.Minute})
	return &browser{Browser: b, t: t, srv: srv, rec: rec}
}

// artifactDir is where screenshots go: $QUIVER_ARTIFACTS/webui, else ""
// (the test's temporary directory).
func artifactDir() string {
	if d := os.Getenv("QUIVER_ARTIFACTS"); d != "" {
		return filepath.Join(d, "webui")
	}
	return ""
}

// eval returns a JavaScript expression's value (browsertest.Eval).
func eval[T any](b *browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	return browsertest.Eval[T](b.Browser, expr, opts...)
}

// login signs in through the stub's login link, pressing Sign in on the
// page it opens, and waits for the app.
func (b *browser) login() {
	b.t.Helper()
	b.signIn(b.srv.URL + "/login?token=login-link")
}

// signIn opens a login link, presses Sign in on its page and waits for
// the app.
func (b *browser) signIn(link string) {
	b.t.Helper()
	b.Do("open the login link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`#sign-in`)))
	b.Do("sign in", chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
}

// open routes the app to hash and waits until main shows that route
// (not the page before it, which may have an element matching sel too)
// and sel in it.
func (b *browser) open(hash, sel string) {
	b.t.Helper()
	b.Do("open "+hash, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, hash)),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`main[data-route=%q] %s`, hash, strings.TrimPrefix(sel, "main ")))))
	if n := eval[int](b, `document.querySelectorAll('main h1').length`); n != 1 {
		b.Shot("headings")
		b.t.Fatalf("%s: %d page headings, want 1 (pages rendered on top of each other?)", hash, n)
	}
}

// send types a message in the open conversation and sends it.
func (b *browser) send(text string) {
	b.t.Helper()
	b.Do("send "+text, chromedp.SetValue(chromedp.CSS(`#message`), text), chromedp.Click(chromedp.CSS(`#send`)))
}

// requests returns the recorded API requests to method+path.
func (b *browser) requests(method, path string) []request {
	var out []request
	for _, r := range b.rec.recorded() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// sent returns the single recorded request to method+path.
func (b *browser) sent(method, path string) request {
	b.t.Helper()
	rs := b.requests(method, path)
	if len(rs) != 1 {
		b.t.Fatalf("%s %s sent %d times, want once", method, path, len(rs))
	}
	return rs[0]
}

// checkHeaders asserts every API request carried the browser's zone and,
// when unsafe, the session's CSRF token csrf.
func (b *browser) checkHeaders(csrf string) {
	b.t.Helper()
	for _, r := range b.rec.recorded() {
		if r.Timezone != testZone {
			b.t.Errorf("%s %s: X-Timezone %q, want %q", r.Method, r.Path, r.Timezone, testZone)
		}
		if r.Method != "GET" && r.CSRF != csrf {
			b.t.Errorf("%s %s: X-CSRF-Token %q, want the session's %q", r.Method, r.Path, r.CSRF, csrf)
		}
	}
}

// scriptedTurn opens the conversation, sends the scripted message and
// waits until the turn has paused on its question.
func (b *browser) scriptedTurn() {
	b.t.Helper()
	b.open("#/chat/"+stubConv, `#message`)
	b.send(msgScripted)
	b.Do("turn ends", chromedp.WaitVisible(chromedp.CSS(`button.suggested`)), chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
}

var convPath = "/api/conversations/" + stubConv

func TestSignedOutPage(t *testing.T) {
	api := newStubAPI()
	b := newBrowser(t, api)
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	b.WaitText(`main h1`, "Sign in to Quiver")
	b.WaitText(`main`, "one-time login link")
	if eval[bool](b, `!document.getElementById('nav').hidden`) {
		t.Error("navigation shown to a signed-out visitor")
	}
	b.Shot("signed-out")

	// A session that ends while the page is open.
	b.login()
	b.open("#/tools", `table.catalog`)
	api.ended.Store(true)
	b.Do("navigate", chromedp.Evaluate[chromedp.Void](`location.hash = '#/agents'`))
	b.WaitText(`main`, "Your session has ended.")
	b.WaitText(`main h1`, "Sign in to Quiver")
	if eval[bool](b, `!document.getElementById('nav').hidden`) {
		t.Error("navigation still shown after the session ended")
	}
}

// TestDroppedStreamResumes: a stream that breaks mid-turn (no done) is
// resumed from the last event shown with GET …/events, and the answer is
// whole, shown once.
func TestDroppedStreamResumes(t *testing.T) {
	api := newStubAPI()
	b := newBrowser(t, api)
	b.login()
	b.open("#/chat/"+stubConv, `#message`)
	b.WaitText(`.transcript`, "Hello Ana. How can I help?")
	b.send(msgDropped)
	b.WaitText(`.transcript .msg.assistant:last-child .text`, "Part one, part two.")
	b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
	if got := eval[string](b, `document.querySelector('.transcript .msg.assistant:last-child .text').textContent`); got != "Part one, part two." {
		t.Errorf("the resumed answer: %q", got)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.resumed) != 1 || api.resumed[0] != "turn=turn_1&after=2" {
		t.Errorf("resume requests: %q, want one after event 2", api.resumed)
	}
}

func TestChatStreamsTurnWithToolCards(t *testing.T) {
	api := newStubAPI()
	release := make(chan struct{})
	api.released = release
	b := newBrowser(t, api)
	b.login()
	b.open("#/chat/"+stubConv, `#message`)
	b.WaitText(`.transcript`, "Hello Ana. How can I help?") // the stored transcript

	b.send(msgScripted)
	// The first delta is on screen while the turn still runs.
	b.WaitText(`.transcript .msg.assistant:last-child .text`, "Let me")
	b.Do("cancel shown while running", chromedp.WaitVisible(chromedp.CSS(`#cancel`)))
	if got := eval[string](b, `document.querySelector('.transcript').textContent`); strings.Contains(got, "work that out") {
		t.Fatalf("text after the held delta is already shown: %q", got)
	}
	if !eval[bool](b, `document.getElementById('send').disabled`) {
		t.Error("Send is enabled while a turn runs")
	}
	b.Shot("streaming")
	close(release)

	b.WaitText(`.tool-card[data-call-id="call_1"] .badge`, "done")
	b.WaitText(`.tool-card[data-call-id="call_2"] .badge`, "error")
	b.WaitText(`#usage`, "1,200 input tokens (1,000 cached)")
	b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)), chromedp.WaitVisible(chromedp.CSS(`button.suggested`)))

	type card struct{ Name, Args, Result, Badge string }
	cards := eval[[]card](b, `[...document.querySelectorAll('.tool-card')].map(c => ({
		Name: c.querySelector('.tool-name').textContent,
		Args: c.querySelector('pre.args').textContent,
		Result: c.querySelector('.tool-result pre').textContent,
		Badge: c.querySelector('.badge').textContent }))`)
	want := []card{
		{Name: "calculate", Args: "{\n  \"expression\": \"2+2\"\n}", Result: "4", Badge: "done"},
		{Name: "fetch_url", Args: "{\n  \"url\": \"http://10.0.0.1/\"\n}", Result: "fetch_url: blocked address 10.0.0.1", Badge: "error"},
	}
	if d := cmp.Diff(want, cards); d != "" {
		t.Errorf("tool cards (-want +got):\n%s", d)
	}
	if !eval[bool](b, `document.querySelector('.tool-card[data-call-id="call_2"]').classList.contains('error')`) {
		t.Error("the failed call's card is not marked as an error")
	}
	// The checklist is shown once, where it first came, and updated in
	// place: above the answer that follows it.
	steps := eval[[]string](b, `[...document.querySelectorAll('.transcript .turn-checklist .step')].map(li => li.className + '|' + li.lastChild.textContent)`)
	if d := cmp.Diff([]string{"step done|Add the numbers", "step running|Check the page"}, steps); d != "" {
		t.Errorf("checklist (-want +got):\n%s", d)
	}
	if n := eval[int](b, `document.querySelectorAll('.transcript .turn-checklist').length`); n != 1 {
		t.Errorf("%d checklists shown, want one updated in place", n)
	}
	if !eval[bool](b, `!!(document.querySelector('.transcript .turn-checklist').compareDocumentPosition(document.querySelector('.tool-card[data-call-id="call_1"]')) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
		t.Error("the checklist is not above the work that followed it")
	}
	texts := eval[[]string](b, `[...document.querySelectorAll('.transcript .msg .text')].map(e => e.textContent)`)
	wantTexts := []string{"Hi there", "Hello Ana. How can I help?", msgScripted, "Let me work that out.", "2 + 2 = 4.", "Which currency should I use?"}
	if d := cmp.Diff(wantTexts, texts); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.querySelector('main').textContent`); strings.Contains(got, "null") || strings.Contains(got, "undefined") {
		t.Errorf("the page shows a missing value: %q", got)
	}
	if got := eval[string](b, `document.querySelector('.transcript').getAttribute('aria-live')`); got != "polite" {
		t.Errorf("transcript aria-live = %q", got)
	}
	b.Shot("turn")
	if got := b.sent("POST", convPath+"/messages").Body["message"]; got != msgScripted {
		t.Errorf("message body = %v", got)
	}
	b.checkHeaders(stubCSRF)
}

func TestOlderMessagesLoadOnRequest(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/chat/"+stubConv, `.older button`)
	b.Do("show older", chromedp.Click(chromedp.CSS(`.older button`)), chromedp.WaitNotPresent(chromedp.CSS(`.older`)))
	texts := eval[[]string](b, `[...document.querySelectorAll('.transcript .msg .text')].map(e => e.textContent)`)
	if d := cmp.Diff([]string{"Earlier question", "Earlier answer", "Hi there", "Hello Ana. How can I help?"}, texts); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
	var queries []string
	for _, r := range b.requests("GET", convPath+"/messages") {
		queries = append(queries, r.Query)
	}
	if d := cmp.Diff([]string{"", "before=11"}, queries); d != "" {
		t.Errorf("transcript requests (-want +got):\n%s", d)
	}
}

func TestSuggestedAnswerPostsToAnswer(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.scriptedTurn()
	b.WaitText(`button.suggested`, "EUR")
	b.Do("click the suggested answer", chromedp.Click(chromedp.CSS(`button.suggested`)))
	b.WaitText(`.transcript`, "Using EUR: 4.00.")
	b.Do("pause block gone", chromedp.WaitNotPresent(chromedp.CSS(`.pause`)))
	r := b.sent("POST", convPath+"/answer")
	if d := cmp.Diff(request{Method: "POST", Path: convPath + "/answer", CSRF: stubCSRF, Timezone: testZone,
		Body: map[string]any{"answer": "EUR"}, Status: 200}, r); d != "" {
		t.Errorf("answer request (-want +got):\n%s", d)
	}
	b.Shot("answered")
	b.checkHeaders(stubCSRF)
}

func TestNextActionChipSendsItsText(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.scriptedTurn()
	chips := eval[[]string](b, `[...document.querySelectorAll('.chips button')].map(c => c.textContent)`)
	if d := cmp.Diff([]string{"Show the steps", "Convert it to EUR"}, chips); d != "" {
		t.Fatalf("chips (-want +got):\n%s", d)
	}
	b.Do("click a chip", chromedp.Click(chromedp.CSS(`.chips button:nth-child(2)`)))
	b.WaitText(`.transcript`, "You said: Convert it to EUR")
	var bodies []any
	for _, r := range b.requests("POST", convPath+"/messages") {
		bodies = append(bodies, r.Body["message"])
	}
	if d := cmp.Diff([]any{msgScripted, "Convert it to EUR"}, bodies); d != "" {
		t.Errorf("messages sent (-want +got):\n%s", d)
	}
	if n := len(b.requests("POST", convPath+"/answer")); n != 0 {
		t.Errorf("a chip went to /answer (%d requests)", n)
	}

	// Keyboard: Enter in the message box sends.
	b.Do("type and press Enter", chromedp.Focus(chromedp.CSS(`#message`)), chromedp.SendKeys(chromedp.CSS(`#message`), "Thanks\n"))
	b.WaitText(`.transcript`, "You said: Thanks")
	b.checkHeaders(stubCSRF)
}

func TestCancelStopsRunningTurn(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/chat/"+stubConv, `#message`)
	b.send(msgSlow)
	b.WaitText(`.transcript`, "Working on it…")
	b.Do("cancel", chromedp.Click(chromedp.CSS(`#cancel`)))
	b.WaitText(`.transcript`, "Turn cancelled.")
	b.Do("composer back", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)), chromedp.WaitEnabled(chromedp.CSS(`#send`)))
	b.sent("POST", convPath+"/cancel")
	b.checkHeaders(stubCSRF)
}

func TestNoModelSaysHowToConnectOne(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/chat/"+stubConv, `#message`)
	b.send(msgNoModel)
	b.Do("help shown", chromedp.WaitVisible(chromedp.CSS(`.no-model`)))
	for _, want := range []string{"OPENAI_API_KEY", "ollama pull", "localhost:11434", "docs/models.md"} {
		b.WaitText(`.no-model`, want)
	}
	href := eval[string](b, `document.querySelector('.no-model a').getAttribute('href')`)
	if want := "#/inspect/" + stubConv + "?message=Hello%3F"; href != want {
		t.Errorf("inspector link %q, want %q", href, want)
	}
	b.Shot("no-model")
}

func TestInspectorShowsExcludedToolWithReason(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/inspect/"+stubConv+"?message="+url.QueryEscape("what is 2+2"), `table.excluded`)
	type row struct{ Name, Reason string }
	rows := eval[[]row](b, `[...document.querySelectorAll('table.excluded tbody tr')].map(r => ({
		Name: r.cells[0].textContent, Reason: r.cells[1].textContent }))`)
	want := []row{
		{"web_search", "Deliberate Tool Mode: the message asks for no web search"},
		{"memory_save", "memory: switch off"},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("excluded tools (-want +got):\n%s", d)
	}
	b.WaitText(`#ins-tools`, "Declared tools (2)")
	b.WaitText(`.tools-table`, "calculate")
	if got := eval[[]string](b, `[...document.querySelectorAll('.tools-table tbody th .why')].map(e => e.textContent)`); !cmp.Equal(got, []string{"always-on: kept by deliberate tool mode"}) {
		t.Errorf("why calculate is declared: %q", got)
	}
	// An MCP tool shows which server and tool its name maps to.
	if got := eval[[]string](b, `[...document.querySelectorAll('.tools-table tbody th .origin')].map(e => e.textContent)`); !cmp.Equal(got, []string{"MCP server docs, tool search_docs"}) {
		t.Errorf("MCP origins shown: %q", got)
	}
	b.WaitText(`.inspection`, "what is")                                    // the Deliberate Tool Mode match
	b.WaitText(`.inspection`, "{user_department} is empty for this caller") // a warning
	b.WaitText(`.inspection`, "2,400 of 3,000 characters")                  // always-on against its ceiling
	b.WaitText(`.inspection`, "You are Acme's internal assistant.")
	if got := b.sent("GET", convPath+"/inspect").Query; got != "message=what+is+2%2B2" {
		t.Errorf("inspect query %q", got)
	}
	b.Shot("draft")

	// A past turn instead of a draft.
	b.Do("pick a past turn", chromedp.SetValue(chromedp.CSS(`#turn`), "turn_0"),
		chromedp.Click(chromedp.CSS(`.inspect-form button[type=submit]`)))
	b.WaitText(`.inspection`, "turn_0")
	if rs := b.requests("GET", convPath+"/inspect"); len(rs) != 2 || rs[1].Query != "turn=turn_0" {
		t.Errorf("inspect requests %+v, want a second one for turn_0", rs)
	}
	if n := eval[int](b, `document.querySelectorAll('.tools-table .why').length`); n != 0 {
		t.Errorf("a past turn shows %d reasons a tool was declared, want none (not recorded)", n)
	}
	b.checkHeaders(stubCSRF)
}

func TestMCPServersAddEnableDelete(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/mcp", `tr[data-server="docs"]`)
	b.WaitText(`tr[data-server="docs"]`, "docs__search_docs")
	type row struct{ Status, Token, Tools string }
	rowOf := func(name string) row {
		return eval[row](b, fmt.Sprintf(`(() => { const r = document.querySelector('tr[data-server=%q]');
			const cell = (l) => r.querySelector('[data-label="' + l + '"]').textContent.replace(l, '');
			return { Status: cell('Status'), Token: cell('Token'), Tools: r.querySelector('[data-label="Tools"] ul, [data-label="Tools"] span').textContent }; })()`, name))
	}
	// Each tool by the name models call it; a sanitised one with the
	// server's name for it.
	if d := cmp.Diff(row{"Enabled", "Set", "docs__search_docsdocs__read_pagedocs__page_get_1faa9758 (page.get)"}, rowOf("docs")); d != "" {
		t.Errorf("docs row (-want +got):\n%s", d)
	}
	if d := cmp.Diff(row{"Disabled", "Not set", "Discovery unknown"}, rowOf("legacy")); d != "" {
		t.Errorf("legacy row (-want +got):\n%s", d)
	}

	// Add.
	b.Do("fill the add form",
		chromedp.SetValue(chromedp.CSS(`#mcp-name`), "tracker"),
		chromedp.SetValue(chromedp.CSS(`#mcp-url`), "https://tracker.example/mcp"),
		chromedp.SetValue(chromedp.CSS(`#mcp-token`), "s3cret-token"),
		chromedp.SetValue(chromedp.CSS(`#mcp-type`), "general"),
		chromedp.Click(chromedp.CSS(`#mcp-add button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-server="tracker"]`)))
	b.WaitText(`.form-status`, "Added “tracker”: no tools discovered.")
	if d := cmp.Diff(row{"Enabled", "Set", "None discovered"}, rowOf("tracker")); d != "" {
		t.Errorf("tracker row (-want +got):\n%s", d)
	}
	add := b.sent("POST", "/api/mcp-servers")
	if d := cmp.Diff(map[string]any{"name": "tracker", "url": "https://tracker.example/mcp", "token": "s3cret-token", "type": "general"}, add.Body); d != "" {
		t.Errorf("add body (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.getElementById('mcp-token').value`); got != "" {
		t.Error("the token stays in the form after adding")
	}
	b.Shot("added")

	// Enable.
	b.Do("enable legacy", chromedp.Click(chromedp.CSS(`tr[data-server="legacy"] td.actions button:first-child`)))
	b.WaitText(`tr[data-server="legacy"] [data-label="Status"]`, "Enabled")
	b.sent("POST", "/api/mcp-servers/legacy/enable")

	// Delete, first changing our mind, then confirming.
	b.Do("delete docs, keep it",
		chromedp.Click(chromedp.CSS(`tr[data-server="docs"] button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog.confirm`)),
		chromedp.Click(chromedp.CSS(`dialog.confirm button[value="no"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`dialog.confirm`)))
	if n := len(b.requests("DELETE", "/api/mcp-servers/docs")); n != 0 {
		t.Fatalf("kept server deleted (%d requests)", n)
	}
	b.Do("delete tracker",
		chromedp.Click(chromedp.CSS(`tr[data-server="tracker"] button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog.confirm`)))
	b.WaitText(`dialog.confirm`, "Delete the MCP server “tracker”?")
	b.Shot("confirm-delete")
	b.Do("confirm", chromedp.Click(chromedp.CSS(`dialog.confirm button[value="yes"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-server="tracker"]`)))
	b.WaitText(`.form-status`, "Deleted “tracker”.")
	if got := b.sent("DELETE", "/api/mcp-servers/tracker").Query; got != "confirm=true" {
		t.Errorf("delete query %q", got)
	}
	b.Do("docs still listed", chromedp.WaitVisible(chromedp.CSS(`tr[data-server="docs"]`)))
	b.Shot("deleted")
	b.checkHeaders(stubCSRF)
}

func TestAgentEditorSavesAndDeletes(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.open("#/agents/assistant", `#definition`)
	def := eval[string](b, `document.getElementById('definition').value`)
	if !strings.HasPrefix(def, "name: assistant\n") {
		t.Fatalf("definition %q", def)
	}
	save := chromedp.Click(chromedp.CSS(`.agent-form button[type=submit]`))
	b.Do("save with an unknown macro",
		chromedp.SetValue(chromedp.CSS(`#definition`), strings.Replace(def, "assistant.\n", "assistant for {user_nam}.\n", 1)), save)
	b.WaitText(`.form-status`, "Saved “assistant”.")
	b.WaitText(`.form-status`, "prompt: unknown macro {user_nam}")
	if n := eval[int](b, `document.querySelectorAll('.allowlist-warnings').length`); n != 0 {
		t.Errorf("%d allowlist warning boxes for a clean allowlist", n)
	}
	misspelt := strings.Replace(def, "tools: [web_search]\n", "tools: [web_serch, gitlab/*]\n", 1)
	if misspelt == def {
		t.Fatalf("the stub's agent has no tools line to change: %q", def)
	}
	b.Do("save with a misspelt tool", chromedp.SetValue(chromedp.CSS(`#definition`), misspelt), save)
	b.WaitText(`.allowlist-warnings`, "Allowlist and switch warnings (2)")
	b.WaitText(`.allowlist-warnings li[data-entry="web_serch"]`, `"web_serch" is not a tool or family name — did you mean web_search?`)
	b.WaitText(`.allowlist-warnings li[data-entry="gitlab/*"]`, `no MCP server "gitlab" is registered in this organisation`)
	if got := eval[string](b, `document.querySelector('.allowlist-warnings li[data-entry="web_serch"] code').textContent`); got != "web_search" {
		t.Errorf("suggestion shown as %q", got)
	}
	b.Shot("allowlist-warnings")
	b.Do("save an invalid definition", chromedp.SetValue(chromedp.CSS(`#definition`), def+"colour: red\n"), save)
	b.WaitText(`.form-status .alert`, "field colour not found")
	b.Shot("invalid")
	b.Do("delete",
		chromedp.Click(chromedp.CSS(`#delete-agent`)),
		chromedp.WaitVisible(chromedp.CSS(`dialog.confirm`)),
		chromedp.Click(chromedp.CSS(`dialog.confirm button[value="yes"]`)))
	b.WaitText(`main`, "No agents yet.")
	b.sent("DELETE", "/api/agents/assistant")
	b.checkHeaders(stubCSRF)
}

func TestPhoneWidthHasNoHorizontalScroll(t *testing.T) {
	const width, height = 375, 740
	api := newStubAPI()
	api.noModel.Store(true) // the chat shows the no-model notice
	b := newBrowser(t, api)
	b.Do("phone viewport", chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulateTouch))
	b.login()
	// An answer with a code line and a table wider than the phone, which
	// scroll inside their own boxes; then the scripted turn.
	b.open("#/chat/"+stubConv, `#message`)
	b.send(msgMarkdown)
	b.Do("Markdown answer", chromedp.WaitVisible(chromedp.CSS(`.msg.assistant:not([aria-busy]) .md ol`)),
		chromedp.WaitEnabled(chromedp.CSS(`#send`)))
	for _, sel := range []string{`.md pre`, `.md .table-wrap`} {
		if !eval[bool](b, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e.scrollWidth > e.clientWidth; })()`, sel)) {
			t.Errorf("%s is not wider than its box at phone width: the test shows nothing", sel)
		}
	}
	b.scriptedTurn()
	pages := []struct {
		name, hash, ready string
		then              []chromedp.Action[chromedp.Void] // shows more of the page
	}{
		{name: "chat", hash: "#/chat/" + stubConv, ready: `#model-notice`},
		{name: "chat-list", hash: "#/chat", ready: `.new-conv`},
		{name: "inspector", hash: "#/inspect/" + stubConv + "?message=what+is+2%2B2", ready: `table.excluded`},
		{name: "agents", hash: "#/agents/assistant", ready: `#definition`},
		{name: "tools", hash: "#/tools?agent=assistant&tool=fetch_url", ready: `#console-tool:enabled`, then: []chromedp.Action[chromedp.Void]{
			chromedp.Click(chromedp.CSS(`#console-run`)), chromedp.WaitVisible(chromedp.CSS(`#console-result`))}},
		{name: "mcp", hash: "#/mcp", ready: `tr[data-server="docs"]`},
		{name: "settings", hash: "#/settings", ready: `#dtm-form`},
		{name: "preferences", hash: "#/preferences", ready: `#prefs-form`},
		{name: "people", hash: "#/people", ready: `tr[data-user="u2"]`, then: []chromedp.Action[chromedp.Void]{
			chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button[aria-label^="New login link"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#login-link`))}},
	}
	for _, p := range pages {
		if p.name != "chat" {
			b.open(p.hash, p.ready)
		}
		if p.then != nil {
			b.Do(p.name, p.then...)
		}
		type dims struct{ Scroll, Inner int }
		got := eval[dims](b, `({ Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth })`)
		if got.Inner != width || got.Scroll > width {
			t.Errorf("%s: page %dpx wide in a %dpx window (viewport %dpx)", p.name, got.Scroll, got.Inner, width)
		}
		b.Shot(p.name)
	}
}
