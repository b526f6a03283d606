package browser

import (
	"context"
	"errors"
	"sync"
)

// Lazy is a Checker that starts its Chromium on the first check, so a
// server whose agents never check an artifact never runs a browser. Its
// executable is looked for when it is made: Unavailable says, before any
// check, whether the checks can run here at all (what the artifact tools
// are left out with). A start that fails is reported by that check and
// tried again by the next. It is safe for concurrent use.
type Lazy struct {
	opts        Options
	unavailable string
	mu          sync.Mutex
	c           *Chromium
	closed      bool
}

var _ Checker = (*Lazy)(nil)

// NewLazy looks for opts.ExecPath (or chromium on PATH) and returns the
// checker; nothing starts yet.
func NewLazy(opts Options) *Lazy {
	l := &Lazy{opts: opts}
	if _, err := findExec(opts.ExecPath); err != nil {
		l.unavailable = err.Error()
	}
	return l
}

// Unavailable returns why no check can run here (no browser found), or
// "".
func (l *Lazy) Unavailable() string { return l.unavailable }

// errClosed is what a check of a closed Lazy returns.
var errClosed = errors.New("browser: closed")

// browser returns the running Chromium, starting it under ctx when none
// runs.
func (l *Lazy) browser(ctx context.Context) (*Chromium, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return nil, errClosed
	case l.unavailable != "":
		return nil, errors.New(l.unavailable)
	case l.c != nil:
		return l.c, nil
	}
	c, err := NewChromium(ctx, l.opts)
	if err != nil {
		return nil, err
	}
	l.c = c
	return c, nil
}

// Inspect implements Checker.
func (l *Lazy) Inspect(ctx context.Context, doc Document, viewports []Viewport) (Report, error) {
	c, err := l.browser(ctx)
	if err != nil {
		return Report{}, err
	}
	return c.Inspect(ctx, doc, viewports)
}

// Measure implements Checker.
func (l *Lazy) Measure(ctx context.Context, doc Document, viewports []Viewport, selectors []string) (Report, error) {
	c, err := l.browser(ctx)
	if err != nil {
		return Report{}, err
	}
	return c.Measure(ctx, doc, viewports, selectors)
}

// PrintPDF implements Checker.
func (l *Lazy) PrintPDF(ctx context.Context, doc Document) ([]byte, error) {
	c, err := l.browser(ctx)
	if err != nil {
		return nil, err
	}
	return c.PrintPDF(ctx, doc)
}

// Close stops the browser if it started; later checks fail. It is safe
// to call more than once.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}
