package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// tab is one open page: its target and what it recorded.
type tab struct {
	target *chromedp.Target
	rec    *recorder
}

// openTab starts the tab of ctx, arms request interception (every
// request, at the request stage, before any content exists) and sets
// the viewport.
func openTab(ctx context.Context, v Viewport) (*tab, error) {
	if err := chromedp.Do(ctx); err != nil {
		return nil, fmt.Errorf("open tab: %w", err)
	}
	t := &tab{target: chromedp.FromContext(ctx).Target, rec: newRecorder()}
	if err := chromedp.Listen(ctx, t.rec.listen); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	go t.failPaused(ctx)
	if _, err := cdp.Call(ctx, t.target, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}},
	}); err != nil {
		return nil, fmt.Errorf("intercept requests: %w", err)
	}
	steps := []func() error{
		func() error { _, err := cdp.Call(ctx, t.target, network.Enable, network.EnableParams{}); return err },
		func() error { _, err := cdp.Call(ctx, t.target, runtime.Enable, cdp.Empty{}); return err },
		func() error {
			_, err := cdp.Call(ctx, t.target, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
				Width: int64(v.Width), Height: int64(v.Height), DeviceScaleFactor: 1})
			return err
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, fmt.Errorf("prepare tab: %w", err)
		}
	}
	return t, nil
}

// failPaused fails every intercepted request until ctx ends. A
// navigation is aborted (ERR_ABORTED commits no error page, so the
// document stays and a script cannot take the tab elsewhere); any other
// request is blocked by client.
func (t *tab) failPaused(ctx context.Context) {
	for {
		ev, ok := t.rec.nextPaused(ctx)
		if !ok {
			return
		}
		reason := network.ErrorReasonBlockedByClient
		if ev.ResourceType == network.ResourceTypeDocument {
			reason = network.ErrorReasonAborted
		}
		_, _ = cdp.Call(ctx, t.target, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: reason})
		t.rec.done()
	}
}

// settleJS resolves once the document has loaded, its fonts are ready and
// two frames have been painted.
const settleJS = `new Promise(done => {
  const frames = () => requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
  const fonts = () => (document.fonts ? document.fonts.ready : Promise.resolve()).then(frames, frames);
  if (document.readyState === 'complete') fonts(); else addEventListener('load', fonts, {once: true});
})`

// framesJS resolves after two painted frames.
const framesJS = `new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`

// maxQuietRounds bounds the wait for the page's requests to stop.
const maxQuietRounds = 10

// load puts html into the tab's about:blank document (no http origin
// ever exists), waits for it to load, then for the page's requests to
// stop: a round of two frames with no new request and none pending.
func (t *tab) load(ctx context.Context, html string) error {
	if _, err := cdp.Call(ctx, t.target, page.SetDocumentContent, page.SetDocumentContentParams{
		FrameID: cdp.FrameID(t.target.TargetID), HTML: html}); err != nil {
		return fmt.Errorf("set document: %w", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](settleJS, chromedp.EvalAwaitPromise)); err != nil {
		return fmt.Errorf("wait for load: %w", err)
	}
	for range maxQuietRounds {
		before := t.rec.seen()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](framesJS, chromedp.EvalAwaitPromise)); err != nil {
			return fmt.Errorf("wait for the page to settle: %w", err)
		}
		if t.rec.seen() == before && t.rec.pendingCount() == 0 {
			break
		}
	}
	return nil
}

// screenshot captures the viewport as PNG.
func (t *tab) screenshot(ctx context.Context) ([]byte, error) {
	res, err := cdp.Call(ctx, t.target, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return res.Data, nil
}

// pdf prints the page on A4 unless its CSS @page says otherwise, with
// backgrounds, refusing a result over limit bytes.
func (t *tab) pdf(ctx context.Context, limit int) ([]byte, error) {
	b, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4),
		chromedp.PDFPreferCSSPageSize(), chromedp.PDFPrintBackground()))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("the PDF is %d bytes, more than the %d allowed", len(b), limit)
	}
	return b, nil
}

// xmlProlog matches an SVG file's XML declaration and doctype, which
// have no place inside HTML.
var xmlProlog = regexp.MustCompile(`^(?s)\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?`)

// wrapHead opens the page an SVG document is drawn in.
const wrapHead = `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0}body>svg{display:block}</style></head><body>`

// wrap returns the HTML a tab loads for doc: HTML as written; SVG inline
// in an otherwise empty page with no margin, so the document's size is
// the drawing's.
func wrap(doc Document) string {
	if doc.Kind != SVG {
		return doc.Content
	}
	var b strings.Builder
	b.WriteString(wrapHead)
	b.WriteString(xmlProlog.ReplaceAllString(doc.Content, ""))
	b.WriteString(`</body></html>`)
	return b.String()
}

// recorder keeps what a page did: its console, the URLs it tried to
// load, and the intercepted requests waiting to be failed. Its listen
// runs in the tab's event loop and only records.
type recorder struct {
	mu      sync.Mutex
	wake    chan struct{}
	paused  []*fetch.EventRequestPaused
	pending int // paused, not yet failed
	events  int // request events seen

	console        []Message
	consoleOmitted int
	blocked        []string
	blockedSet     map[string]bool
	blockedOmitted int
}

func newRecorder() *recorder {
	return &recorder{wake: make(chan struct{}, 1), blockedSet: map[string]bool{}}
}

func (r *recorder) listen(ev any) {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		r.mu.Lock()
		r.paused = append(r.paused, ev)
		r.pending++
		r.events++
		r.block(ev.Request.URL)
		r.mu.Unlock()
		select {
		case r.wake <- struct{}{}:
		default:
		}
	case *network.EventRequestWillBeSent:
		r.noteURL(ev.Request.URL)
	case *network.EventWebSocketCreated:
		r.noteURL(ev.URL)
	case *runtime.EventConsoleAPICalled:
		r.message(string(ev.Type), consoleText(ev.Args))
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		r.message("exception", text)
	}
}

// noteURL records a URL the page asked the network for: every such
// request fails, so every one is a blocked load.
func (r *recorder) noteURL(u string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events++
	r.block(u)
}

// block adds u to the blocked list once; data:, blob: and about: URLs
// never reach the network and are not listed. The caller holds mu.
func (r *recorder) block(u string) {
	if u == "" || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") || strings.HasPrefix(u, "about:") {
		return
	}
	u = truncate(u, MaxURLBytes)
	if r.blockedSet[u] {
		return
	}
	if len(r.blocked) >= MaxBlocked {
		r.blockedOmitted++
		if len(r.blockedSet) < 10*MaxBlocked { // bounds the set too; past it, repeats count again
			r.blockedSet[u] = true
		}
		return
	}
	r.blockedSet[u] = true
	r.blocked = append(r.blocked, u)
}

func (r *recorder) message(level, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.console) >= MaxMessages {
		r.consoleOmitted++
		return
	}
	r.console = append(r.console, Message{Level: level, Text: truncate(text, MaxMessageBytes)})
}

// nextPaused waits for the next intercepted request; false once ctx ends.
func (r *recorder) nextPaused(ctx context.Context) (*fetch.EventRequestPaused, bool) {
	for {
		r.mu.Lock()
		if len(r.paused) > 0 {
			ev := r.paused[0]
			r.paused = r.paused[1:]
			r.mu.Unlock()
			return ev, true
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

func (r *recorder) done() {
	r.mu.Lock()
	r.pending--
	r.mu.Unlock()
}

func (r *recorder) seen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

func (r *recorder) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// fill copies the record into p.
func (r *recorder) fill(p *Page) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p.Console = append([]Message(nil), r.console...)
	p.ConsoleOmitted = r.consoleOmitted
	p.Blocked = append([]string(nil), r.blocked...)
	p.BlockedOmitted = r.blockedOmitted
}

// consoleText joins a console call's arguments as the console shows them.
func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a.Type == runtime.RemoteObjectTypeString && len(a.Value) > 0:
			var str string
			if json.Unmarshal(a.Value, &str) == nil {
				parts = append(parts, str)
			}
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}
