package webui_test

import (
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
