package webui_test

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// systemScheme makes the emulated operating system prefer scheme
// ("light" or "dark").
func (b *browser) systemScheme(scheme string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		b.t.Fatal(err)
	}
}

// themeState is the theme as the page has it.
type themeState struct {
	Attr, Choice, Stored, Background string
}

func (b *browser) theme() themeState {
	b.t.Helper()
	return eval[themeState](b, `({ Attr: document.documentElement.dataset.theme, Choice: document.getElementById('theme').value,
		Stored: localStorage.getItem('quiver.theme') ?? '', Background: getComputedStyle(document.body).backgroundColor })`)
}

const (
	lightBackground = "rgb(246, 247, 249)"
	darkBackground  = "rgb(20, 23, 28)"
)

// contrastJS measures, in the current theme, the contrast ratio (WCAG
// 2) of each pair of colours text is shown in, on probes coloured with
// the style sheet's variables.
const contrastJS = `(() => {
	const probe = document.createElement('div');
	document.body.append(probe);
	const rgb = (v, prop) => { probe.style[prop] = 'var(' + v + ')'; return getComputedStyle(probe)[prop].match(/[\d.]+/g).slice(0, 3).map(Number); };
	const lum = ([r, g, b]) => [r, g, b].map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
		.reduce((s, c, i) => s + c * [0.2126, 0.7152, 0.0722][i], 0);
	const ratio = (fg, bg) => { const a = lum(rgb(fg, 'color')), b = lum(rgb(bg, 'backgroundColor')); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
	const pairs = [['--text', '--bg'], ['--text', '--panel'], ['--text', '--accent-soft'], ['--muted', '--bg'], ['--muted', '--panel'],
		['--accent', '--panel'], ['--accent', '--bg'], ['--accent', '--accent-soft'], ['--accent-text', '--accent'],
		['--danger', '--danger-soft'], ['--danger', '--panel'], ['--ok', '--ok-soft'], ['--text', '--warn-soft']];
	const low = pairs.map(([f, b]) => [f + ' on ' + b, Math.round(ratio(f, b) * 100) / 100]).filter(([, r]) => r < 4.5);
	probe.remove();
	return low.map(([p, r]) => p + ': ' + r);
})()`

func TestThemeToggle(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)
		// System: follows the operating system.
		b.systemScheme("dark")
		if d := cmp.Diff(themeState{"system", "system", "", darkBackground}, b.theme()); d != "" {
			t.Errorf("system theme, dark system (-want +got):\n%s", d)
		}
		b.systemScheme("light")
		if d := cmp.Diff(themeState{"system", "system", "", lightBackground}, b.theme()); d != "" {
			t.Errorf("system theme, light system (-want +got):\n%s", d)
		}
		if low := eval[[]string](b, contrastJS); len(low) != 0 {
			t.Errorf("light theme: contrast below 4.5:1: %q", low)
		}

		// Dark, chosen: stays dark over a light system, and after a reload.
		b.Do("choose dark", chromedp.SetValue(chromedp.CSS(`#theme`), "dark"))
		if d := cmp.Diff(themeState{"dark", "dark", "dark", darkBackground}, b.theme()); d != "" {
			t.Errorf("dark chosen (-want +got):\n%s", d)
		}
		if low := eval[[]string](b, contrastJS); len(low) != 0 {
			t.Errorf("dark theme: contrast below 4.5:1: %q", low)
		}
		b.ShotView("dark")
		b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#message`)))
		if d := cmp.Diff(themeState{"dark", "dark", "dark", darkBackground}, b.theme()); d != "" {
			t.Errorf("dark after a reload (-want +got):\n%s", d)
		}

		// Light, chosen, over a dark system; then back to the system's.
		b.systemScheme("dark")
		b.Do("choose light", chromedp.SetValue(chromedp.CSS(`#theme`), "light"))
		if d := cmp.Diff(themeState{"light", "light", "light", lightBackground}, b.theme()); d != "" {
			t.Errorf("light chosen (-want +got):\n%s", d)
		}
		b.Do("choose system", chromedp.SetValue(chromedp.CSS(`#theme`), "system"))
		if d := cmp.Diff(themeState{"system", "system", "", darkBackground}, b.theme()); d != "" {
			t.Errorf("system chosen again (-want +got):\n%s", d)
		}
	})
}
