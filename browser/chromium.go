package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

// Options configures a Chromium. The zero value finds chromium on PATH,
// runs two pages at a time and gives each page 15 seconds.
type Options struct {
	// ExecPath is the browser's executable; "" looks for chromium,
	// chromium-browser and google-chrome on PATH.
	ExecPath string
	// MaxConcurrent bounds the pages rendered at once across all checks;
	// zero means 2.
	MaxConcurrent int
	// PageTimeout bounds one page: load, settle and capture. A page past
	// it (a script that never yields) fails the check with an error and
	// its tab is closed; zero means 15 s.
	PageTimeout time.Duration
	// MaxPDFBytes bounds a PDF PrintPDF returns; zero (or more than the
	// package's MaxPDFBytes) means MaxPDFBytes.
	MaxPDFBytes int
	// Logger receives start-up and crash reports; nil means slog.Default.
	Logger *slog.Logger
}

// Chromium is the Checker backed by one headless Chromium process. Each
// page renders in a fresh tab in a fresh browser context (no cookies,
// storage or cache shared between pages), so pages never see each other.
// It is safe for concurrent use; Close stops the browser.
type Chromium struct {
	opts    Options
	log     *slog.Logger
	dir     string // the profile, removed by Close
	browser context.Context
	stop    func()
	slots   chan struct{}
}

var _ Checker = (*Chromium)(nil)

// launchFlags are the browser's flags. The network ones are the second
// and third walls behind request interception (see docs/artifacts.md):
// every connection goes to a proxy on a port nothing listens on,
// loopback included, and no name resolves, so even a request the
// interception missed sends no packet anywhere but 127.0.0.1:9.
func launchFlags() []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Headless,
		chromedp.NoSandbox, // the test machines run as root; the network walls do not depend on it
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("proxy-server", "127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("block-new-web-contents", true),
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process,Prerender2,SpeculationRules,NetworkPrediction,PreloadMediaEngagementData,MediaRouter,OptimizationHints,Translate,AutofillServerCommunication,InterestFeedContentSuggestions,DialMediaRouteProvider"),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.WindowSize(DefaultViewport.Width, DefaultViewport.Height),
	}
}

// findExec returns the browser's executable, or an error wrapping
// ErrUnavailable.
func findExec(path string) (string, error) {
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if path != "" {
		names = []string{path}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: none of %v found", ErrUnavailable, names)
}

// NewChromium starts headless Chromium; ctx bounds the start only. A
// missing or failing browser gives an error wrapping ErrUnavailable.
func NewChromium(ctx context.Context, opts Options) (*Chromium, error) {
	exe, err := findExec(opts.ExecPath)
	if err != nil {
		return nil, err
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 2
	}
	if opts.MaxPDFBytes <= 0 || opts.MaxPDFBytes > MaxPDFBytes {
		opts.MaxPDFBytes = MaxPDFBytes
	}
	if opts.PageTimeout <= 0 {
		opts.PageTimeout = 15 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	dir, err := os.MkdirTemp("", "quiver-chromium-")
	if err != nil {
		return nil, fmt.Errorf("%w: profile folder: %v", ErrUnavailable, err)
	}
	flags := append(launchFlags(), chromedp.ExecPath(exe), chromedp.UserDataDir(dir))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags...)
	c := &Chromium{opts: opts, log: log, dir: dir, slots: make(chan struct{}, opts.MaxConcurrent)}
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, c.quiet())
	c.browser = bctx
	c.stop = func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(dir)
	}
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("%w: start %s: %v", ErrUnavailable, exe, err)
	}
	log.Info("browser: chromium started", "exec", exe, "max_concurrent", opts.MaxConcurrent)
	return c, nil
}

// Close stops the browser and removes its profile. Checks running then
// fail; Close is safe to call more than once.
func (c *Chromium) Close() error {
	c.stop()
	return nil
}

// quiet sends chromedp's own messages (protocol noise such as events for
// a frame not yet known) to the debug log.
func (c *Chromium) quiet() chromedp.ContextOption {
	return func(cc *chromedp.Context) {
		debug := func(format string, args ...any) { c.log.Debug("browser: chromedp: " + fmt.Sprintf(format, args...)) }
		chromedp.WithLogf(debug)(cc)
		chromedp.WithErrorf(debug)(cc)
	}
}

// acquire waits for a page slot; release it with <-c.slots.
func (c *Chromium) acquire(ctx context.Context) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for a browser tab: %w", ctx.Err())
	}
}

// Inspect implements Checker.
func (c *Chromium) Inspect(ctx context.Context, doc Document, viewports []Viewport) (Report, error) {
	return c.check(ctx, doc, viewports, func(ctx context.Context, t *tab, p *Page) error {
		shot, err := t.screenshot(ctx)
		if err != nil {
			return err
		}
		p.Screenshot = shot
		lay, err := t.layout(ctx, nil)
		if err != nil {
			return err
		}
		lay.fill(p, false)
		return nil
	})
}

// Measure implements Checker.
func (c *Chromium) Measure(ctx context.Context, doc Document, viewports []Viewport, selectors []string) (Report, error) {
	if err := ValidateSelectors(selectors); err != nil {
		return Report{}, fmt.Errorf("measure: %w", err)
	}
	return c.check(ctx, doc, viewports, func(ctx context.Context, t *tab, p *Page) error {
		lay, err := t.layout(ctx, selectors)
		if err != nil {
			return err
		}
		lay.fill(p, true)
		return nil
	})
}

// check validates, then renders doc at each viewport in turn, running
// capture on each loaded page.
func (c *Chromium) check(ctx context.Context, doc Document, viewports []Viewport, capture func(context.Context, *tab, *Page) error) (Report, error) {
	start := time.Now()
	if err := doc.Validate(); err != nil {
		return Report{}, err
	}
	vs, err := Viewports(viewports)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Pages: make([]Page, 0, len(vs))}
	for _, v := range vs {
		p, err := c.render(ctx, doc, v, capture)
		if err != nil {
			return Report{}, fmt.Errorf("page %d×%d: %w", v.Width, v.Height, err)
		}
		rep.Pages = append(rep.Pages, p)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// PrintPDF implements Checker.
func (c *Chromium) PrintPDF(ctx context.Context, doc Document) ([]byte, error) {
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	var out []byte
	_, err := c.render(ctx, doc, DefaultViewport, func(ctx context.Context, t *tab, _ *Page) error {
		b, err := t.pdf(ctx, c.opts.MaxPDFBytes)
		out = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("print pdf: %w", err)
	}
	return out, nil
}

// render opens a tab, loads doc at v under the page deadline, captures,
// and closes the tab.
func (c *Chromium) render(ctx context.Context, doc Document, v Viewport, capture func(context.Context, *tab, *Page) error) (Page, error) {
	if err := c.acquire(ctx); err != nil {
		return Page{}, err
	}
	defer func() { <-c.slots }()
	tctx, closeTab := chromedp.NewContext(c.browser, chromedp.WithNewBrowserContext())
	defer closeTab()
	pctx, cancel := context.WithTimeout(tctx, c.opts.PageTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the caller's cancellation ends the page too
	defer stop()
	t, err := openTab(pctx, v)
	if err != nil {
		return Page{}, c.pageErr(ctx, pctx, err)
	}
	p := Page{Viewport: v}
	if err := t.load(pctx, wrap(doc)); err != nil {
		return Page{}, c.pageErr(ctx, pctx, err)
	}
	if err := capture(pctx, t, &p); err != nil {
		return Page{}, c.pageErr(ctx, pctx, err)
	}
	t.rec.fill(&p)
	return p, nil
}

// pageErr names a page deadline as such, so a model reads "your script
// did not finish" rather than a protocol error.
func (c *Chromium) pageErr(ctx, pctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the page did not finish loading and settling within %s (a script that never yields?)", c.opts.PageTimeout)
	}
	return err
}
