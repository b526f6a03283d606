package webui_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// eachWidth runs f once per width of chat_test.go's widths, as a subtest
// named after it, leaving the browser to f (atEachWidth gives a stub's).
func eachWidth(t *testing.T, f func(t *testing.T, w width)) {
	t.Helper()
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) { f(t, w) })
	}
}

// use makes the tab w's size (a phone also emulates touch); the page
// reflows at once.
func (b *browser) use(w width) {
	b.t.Helper()
	if !w.phone {
		b.Do("desktop viewport", chromedp.EmulateViewport(w.width, w.height))
		return
	}
	b.Do("phone viewport", chromedp.EmulateViewport(w.width, w.height, chromedp.EmulateMobile, chromedp.EmulateTouch))
}

// fits fails the test when the page is wider than w (it scrolls
// sideways).
func (b *browser) fits(w width, what string) {
	b.t.Helper()
	type dims struct{ Scroll, Inner int64 }
	got := eval[dims](b, `({ Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth })`)
	if got.Inner != w.width || got.Scroll > w.width {
		b.t.Errorf("%s: page %dpx wide in a %dpx window (viewport %dpx)", what, got.Scroll, got.Inner, w.width)
	}
}

// shotOf saves a screenshot of the first element sel matches, as Shot
// names it, for the pages too long for a full-page shot to be read.
func (b *browser) shotOf(sel, name string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("screenshot of %s: %v", sel, err)
	}
	dir := artifactDir()
	if dir == "" {
		dir = b.t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	file := filepath.Join(dir, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(b.t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
