package webui_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// viewport is a screen each behaviour is checked on.
type viewport struct {
	name          string
	width, height int64
	phone         bool
}

// viewports are a desktop window and a phone.
var viewports = []viewport{
	{name: "desktop", width: 1280, height: 900},
	{name: "phone", width: 375, height: 740, phone: true},
}

// atEachWidth runs f once per viewport, as a subtest named after it.
func atEachWidth(t *testing.T, f func(t *testing.T, vp viewport)) {
	t.Helper()
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) { f(t, vp) })
	}
}

// use makes the tab vp's size (a phone also emulates touch); the page
// reflows at once.
func (b *browser) use(vp viewport) {
	b.t.Helper()
	if !vp.phone {
		b.Do("desktop viewport", chromedp.EmulateViewport(vp.width, vp.height))
		return
	}
	b.Do("phone viewport", chromedp.EmulateViewport(vp.width, vp.height, chromedp.EmulateMobile, chromedp.EmulateTouch))
}

// fits fails the test when the page is wider than vp (it scrolls
// sideways).
func (b *browser) fits(vp viewport, what string) {
	b.t.Helper()
	type dims struct{ Scroll, Inner int64 }
	got := eval[dims](b, `({ Scroll: document.documentElement.scrollWidth, Inner: window.innerWidth })`)
	if got.Inner != vp.width || got.Scroll > vp.width {
		b.t.Errorf("%s: page %dpx wide in a %dpx window (viewport %dpx)", what, got.Scroll, got.Inner, vp.width)
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
