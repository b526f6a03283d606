// Package browsertest drives a real headless Chromium from tests: it finds
// the browser, opens one tab on a fresh profile, records what goes wrong in
// the page (JavaScript exceptions, Content-Security-Policy violations,
// console errors, server errors, requests to other origins) and fails the
// test with it, and saves screenshots. Only tests import it.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Path returns Chromium's executable (the Debian package chromium). Without
// one the test skips, unless QUIVER_REQUIRE_PEERS=1 (scripts/test), where a
// missing browser fails it.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
		t.Fatal("chromium not found (Debian package chromium) and QUIVER_REQUIRE_PEERS=1")
	}
	t.Skip("chromium not found; install the Debian package chromium to run the browser tests")
	return ""
}

// Config configures a Browser. The zero value is a 1280×900 tab in the
// host's timezone that may request any origin, saving screenshots in the
// test's temporary directory, with 20-second steps and no bound on the
// browser's life but the test's.
type Config struct {
	// Origin ("http://127.0.0.1:8080") is the only origin the page may
	// request, besides data: URLs; "" allows any.
	Origin string
	// Timezone is the IANA zone the page sees; "" keeps the host's.
	Timezone string
	// Artifacts is the folder screenshots are saved in; "" means a
	// temporary directory of the test.
	Artifacts string
	// Step bounds each Do, WaitText, Eval and Shot; zero means 20 s.
	Step time.Duration
	// Lifetime bounds the browser from its start, every step included, so
	// a test that keeps taking steps still ends; zero means no bound.
	Lifetime time.Duration
}

// defaultStep bounds one step, so a missing element fails fast with what
// was awaited instead of at the test's deadline.
const defaultStep = 20 * time.Second

// Browser is one headless Chromium tab. Its methods fail the test on error
// and must be called from the test's goroutine. The browser closes with
// the test, after Check has reported the page's problems.
type Browser struct {
	t   *testing.T
	ctx context.Context
	cfg Config

	mu       sync.Mutex
	problems []string
}

// New starts Chromium on a fresh profile and opens a blank tab.
func New(t *testing.T, cfg Config) *Browser {
	t.Helper()
	exe := Path(t)
	if cfg.Step == 0 {
		cfg.Step = defaultStep
	}
	if cfg.Artifacts == "" {
		cfg.Artifacts = t.TempDir()
	} else if err := os.MkdirAll(cfg.Artifacts, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}
	b := &Browser{t: t, cfg: cfg}
	root, cancelRoot := context.WithCancel(context.Background())
	if cfg.Lifetime > 0 {
		root, cancelRoot = context.WithTimeout(context.Background(), cfg.Lifetime)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(root,
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("lang", "en-US"), // number formats in assertions
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancelRoot()
	})
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil { // starts the browser and the tab
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.listen); err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(b.Check) // runs before the browser closes
	if cfg.Timezone != "" {
		if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: cfg.Timezone}); err != nil {
			t.Fatalf("timezone override: %v", err)
		}
	}
	return b
}

// listen runs in the tab's event loop: record, return fast.
func (b *Browser) listen(ev any) {
	var problem string
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		u := ev.Request.URL
		if b.cfg.Origin != "" && !strings.HasPrefix(u, b.cfg.Origin+"/") && !strings.HasPrefix(u, "data:") {
			problem = "request left the origin: " + u
		}
	case *network.EventResponseReceived:
		if ev.Response.Status >= 500 {
			problem = fmt.Sprintf("server error %d on %s", ev.Response.Status, ev.Response.URL)
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		problem = fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			problem = "console." + string(ev.Type) + ": " + consoleText(ev.Args)
		}
	case *log.EventEntryAdded:
		if ev.Entry.Source == log.EntrySourceSecurity || strings.Contains(ev.Entry.Text, "Content Security Policy") {
			problem = "security: " + ev.Entry.Text
		}
	}
	if problem != "" {
		b.mu.Lock()
		b.problems = append(b.problems, problem)
		b.mu.Unlock()
	}
}

func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, a.Description)
		}
	}
	return strings.Join(parts, " ")
}

// Check fails the test with every problem the page had so far. New
// registers it to run at the test's end; call it earlier to fail sooner.
func (b *Browser) Check() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("page: %s", p)
	}
	b.problems = nil
}

// Step returns the context of one step, the tab's bounded by Config.Step,
// for the DevTools commands the other methods do not cover. The caller
// cancels it.
func (b *Browser) Step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, b.cfg.Step)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Shot saves a full-page screenshot as <test>-<name>.png in the artifacts
// folder.
func (b *Browser) Shot(name string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.save(name, png)
}

// ShotView saves a screenshot of the window as it shows now (the
// viewport, not the whole page: a page that fills the window and
// scrolls inside its own panes, like the chat, is shown as a person
// sees it) as <test>-<name>.png in the artifacts folder.
func (b *Browser) ShotView(name string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.save(name, png)
}

func (b *Browser) save(name string, png []byte) {
	b.t.Helper()
	file := filepath.Join(b.cfg.Artifacts, unsafeName.ReplaceAllString(b.t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
}

// Do runs actions within one step; on failure it saves a screenshot named
// "failed" and fails the test with what was being done.
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.Shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// Eval returns a JavaScript expression's value, decoded as JSON into T;
// opts (chromedp.EvalAwaitPromise, say) change how it is evaluated.
func Eval[T any](b *Browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// WaitText waits, re-checking on every DOM change, until the first
// element matching the CSS selector sel contains text; at the step's end
// it fails the test with what the element holds.
func (b *Browser) WaitText(sel, text string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.PollFunction[bool](
		`(sel, text) => { const el = document.querySelector(sel); return !!el && el.textContent.includes(text); }`,
		chromedp.WithPollingArgs(sel, text), chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(b.cfg.Step)))
	if err != nil {
		got := Eval[string](b, fmt.Sprintf(`document.querySelector(%q)?.textContent ?? '(no element)'`, sel))
		b.Shot("failed")
		b.t.Fatalf("waiting for %q in %s: %v; it holds %q", text, sel, err, got)
	}
}
