package webui_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// copyCode is code a copy button must copy as written: tabs, HTML and
// entities, blank lines, no trailing newline.
const copyCode = "const s = '<b>&amp;</b>';\n\n\tif (a < b) { s += \"`\"; }"

// showCode renders src with markdown() into a .md box of its own in the
// page, with id id.
func (b *browser) showCode(id, src string) {
	b.t.Helper()
	js, err := json.Marshal(src)
	if err != nil {
		b.t.Fatal(err)
	}
	b.Do("show "+id, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`import('/assets/js/markdown.js').then(({ markdown }) => {
		const d = document.createElement('div');
		d.className = 'md';
		d.id = %q;
		d.append(...markdown(%s));
		document.querySelector('main').append(d);
	})`, id, js), chromedp.EvalAwaitPromise), chromedp.WaitVisible(chromedp.CSS(`#`+id+` .code-copy`)))
}

// colourScheme makes the system's preferred colour scheme scheme ("light"
// or "dark") for the page.
func (b *browser) colourScheme(scheme string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		b.t.Fatalf("prefers-color-scheme %s: %v", scheme, err)
	}
}

// clipboard is the clipboard's text.
func (b *browser) clipboard() string {
	b.t.Helper()
	return eval[string](b, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)
}

// TestCodeBlockCopyButton copies code three ways: with the Clipboard API
// (from a streamed answer in the chat), with the copy command when the
// Clipboard API refuses, and by selecting the code when both fail. Each
// time the copied text is the code exactly as written, and the button
// says what happened, by its text and its accessible name.
func TestCodeBlockCopyButton(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.login()
	b.grantClipboard()
	b.open("#/chat/"+stubConv, `#message`)
	b.send(msgMarkdown)
	answer := `.transcript .msg.assistant:last-child:not([aria-busy])`
	b.Do("answer", chromedp.WaitVisible(chromedp.CSS(answer+` .md ol`)))

	type button struct{ Label, Text, Lang string }
	state := func(block string) button {
		return eval[button](b, `(() => { const f = document.querySelector('`+block+`'); const c = f.querySelector('.code-copy');
			return { Label: c.getAttribute('aria-label'), Text: c.textContent, Lang: f.querySelector('.code-lang')?.textContent ?? '' }; })()`)
	}
	block := answer + ` .code-block`
	if d := cmp.Diff(button{"Copy code", "Copy", "sh"}, state(block)); d != "" {
		t.Errorf("the copy button before a click (-want +got):\n%s", d)
	}
	b.Do("copy with the Clipboard API", chromedp.Click(chromedp.CSS(block+` .code-copy`)))
	b.WaitText(block+` .code-copy`, "Copied")
	if d := cmp.Diff(button{"Copied", "Copied", "sh"}, state(block)); d != "" {
		t.Errorf("the copy button after copying (-want +got):\n%s", d)
	}
	if got := b.clipboard(); got != markdownCode {
		t.Errorf("clipboard %q, want the code %q", got, markdownCode)
	}
	b.Shot("copied")
	b.colourScheme("dark")
	b.Shot("copied-dark")
	b.colourScheme("light")

	// The Clipboard API refuses: the copy command copies the same text,
	// from a text box that is gone afterwards, and focus stays on the button.
	b.showCode("fallback", "```js\n"+copyCode+"\n```")
	b.Do("refuse the Clipboard API", chromedp.Evaluate[chromedp.Void](`(async () => {
		await navigator.clipboard.writeText('');
		window.copyEvents = 0;
		document.addEventListener('copy', () => window.copyEvents++);
		Object.defineProperty(navigator.clipboard, 'writeText', { configurable: true,
			value: () => Promise.reject(new DOMException('refused', 'NotAllowedError')) });
	})()`, chromedp.EvalAwaitPromise))
	b.Do("copy with the copy command", chromedp.Click(chromedp.CSS(`#fallback .code-copy`)))
	b.WaitText(`#fallback .code-copy`, "Copied")
	if got := b.clipboard(); got != copyCode {
		t.Errorf("clipboard after the copy command %q, want the code as written %q", got, copyCode)
	}
	type after struct {
		CopyEvents int
		Focused    bool
		Boxes      int
	}
	if d := cmp.Diff(after{1, true, 0}, eval[after](b, `({ CopyEvents: window.copyEvents,
		Focused: document.activeElement === document.querySelector('#fallback .code-copy'),
		Boxes: document.querySelectorAll('textarea.copy-box').length })`)); d != "" {
		t.Errorf("after the copy command (-want +got):\n%s", d)
	}

	// Both refuse: the code is selected, and the button says how to copy it.
	b.showCode("by-hand", "```\n"+copyCode+"\n```")
	b.Do("refuse the copy command", chromedp.Evaluate[chromedp.Void](`document.execCommand = () => false`))
	b.Do("copy by hand", chromedp.Click(chromedp.CSS(`#by-hand .code-copy`)))
	b.WaitText(`#by-hand .code-copy`, "Selected: press Ctrl+C or ⌘C")
	if got := eval[string](b, `getSelection().toString()`); got != copyCode {
		t.Errorf("selection %q, want the code %q", got, copyCode)
	}
	if d := cmp.Diff(button{"Selected: press Ctrl+C or ⌘C", "Selected: press Ctrl+C or ⌘C", ""}, state(`#by-hand .code-block`)); d != "" {
		t.Errorf("the copy button when nothing could copy (-want +got):\n%s", d)
	}
}

// TestCodeColoursFollowTheTheme checks a keyword's colour: highlight.js's
// a11y light theme or its dark one, by <html data-theme> when it is set and by the
// system's preference when it is not.
func TestCodeColoursFollowTheTheme(t *testing.T) {
	const light, dark = "rgb(121, 40, 161)", "rgb(220, 198, 224)" // .hljs-keyword in a11y-light.css and a11y-dark.css
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	b.showCode("code", "```go\nfunc main() {}\n```")
	b.Do("themes loaded", chromedp.Evaluate[chromedp.Void](`Promise.all([...document.querySelectorAll('link[data-code-theme]')].map((l) =>
		l.sheet ? null : new Promise((done) => l.addEventListener('load', done))))`, chromedp.EvalAwaitPromise))
	tests := []struct{ system, theme, want string }{
		{"light", "", light},
		{"dark", "", dark},
		{"light", "dark", dark},
		{"dark", "light", light},
		{"dark", "", dark}, // the attribute removed again
		{"light", "sepia", light},
	}
	for _, tt := range tests {
		b.colourScheme(tt.system)
		set := `document.documentElement.removeAttribute('data-theme')`
		if tt.theme != "" {
			set = fmt.Sprintf(`document.documentElement.setAttribute('data-theme', %q)`, tt.theme)
		}
		b.Do("theme "+tt.theme, chromedp.Evaluate[chromedp.Void](set))
		// The observer sets the sheets' media in a microtask after the change.
		got := eval[string](b, `Promise.resolve().then(() => getComputedStyle(document.querySelector('#code .hljs-keyword')).color)`, chromedp.EvalAwaitPromise)
		if got != tt.want {
			t.Errorf("system %s, data-theme %q: keyword %s, want %s", tt.system, tt.theme, got, tt.want)
		}
	}
}
