package webui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The everyday chat, at desktop and at phone width: the layout (the
// composer pinned, the list a drawer on a phone), following a streaming
// answer, the working state, Stop, copy, long messages, tool lines and
// errors people can act on.

// width is a window size the chat is tested at.
type width struct {
	name          string
	width, height int64
	phone         bool
}

var widths = []width{{"desktop", 1280, 900, false}, {"phone", 375, 740, true}}

// atEachWidth runs f at each width, on a fresh stub and browser, signed in.
func atEachWidth(t *testing.T, f func(t *testing.T, api *stubAPI, b *browser, w width)) {
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			api := newStubAPI()
			b := newBrowser(t, api)
			b.use(w)
			b.login()
			f(t, api, b, w)
		})
	}
}

// until waits, re-checking every animation frame, until the JavaScript
// expression is true.
func (b *browser) until(what, expr string) {
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr)); err != nil {
		b.Shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// drawerShown is true when the conversation list is visible.
const drawerShown = `getComputedStyle(document.getElementById('convs')).visibility === 'visible'`

// inView tells whether the last element matching sel whose text contains
// text is wholly inside the transcript's visible part and the window.
func (b *browser) inView(sel, text string) bool {
	b.t.Helper()
	return eval[bool](b, fmt.Sprintf(`(() => {
		const el = [...document.querySelectorAll(%q)].filter((e) => e.textContent.includes(%q)).pop();
		if (!el) return false;
		const r = el.getBoundingClientRect();
		const s = document.getElementById('scroller').getBoundingClientRect();
		return r.top >= s.top - 1 && r.bottom <= s.bottom + 1 && r.bottom <= innerHeight && r.top >= 0;
	})()`, sel, text))
}

// composerInView tells whether the message box, Send and Stop's place
// are inside the window, and the page itself does not scroll.
func (b *browser) composerInView() bool {
	b.t.Helper()
	return eval[bool](b, `(() => {
		const inside = (e) => { const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth; };
		return inside(document.getElementById('message')) && inside(document.getElementById('send')) &&
			document.documentElement.scrollHeight <= innerHeight + 1;
	})()`)
}

func TestChatFollowsLongAnswer(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		release := api.hold("long")
		b.open("#/chat/"+stubConv, `#message`)
		if w.phone {
			// The list is a drawer: closed, out of view and of the tab order.
			if eval[bool](b, drawerShown) || eval[bool](b, `document.getElementById('convs').getBoundingClientRect().right > 0`) {
				t.Error("the conversation list shows over the chat at phone width")
			}
			if !eval[bool](b, `document.getElementById('convs').inert`) {
				t.Error("the closed drawer is not inert")
			}
			b.Do("open the drawer", chromedp.Click(chromedp.CSS(`#convs-toggle`)))
			b.until("drawer open", drawerShown+` && document.getElementById('convs').getBoundingClientRect().left >= 0`)
			if got := eval[string](b, `document.activeElement.id + ' ' + document.getElementById('convs-toggle').getAttribute('aria-expanded')`); got != "conv-search true" {
				t.Errorf("opened drawer: focus and aria-expanded %q", got)
			}
			b.ShotView("drawer")
			b.Do("close it with Escape", chromedp.KeyEvent("\x1b"))
			b.until("drawer closed", `!(`+drawerShown+`) && document.activeElement.id === 'convs-toggle'`)
		} else {
			// The list on the left of the transcript.
			if !eval[bool](b, `document.getElementById('convs').getBoundingClientRect().right <= document.querySelector('.thread').getBoundingClientRect().left + 1`) {
				t.Error("the conversation list is not left of the transcript")
			}
		}
		b.send(msgLong)
		b.WaitText(`.transcript .msg.assistant:last-child`, fmt.Sprintf("Line %d of the story.", longLines))
		if !b.inView(`.transcript .msg.assistant:last-child p`, fmt.Sprintf("Line %d ", longLines)) {
			b.ShotView("failed")
			t.Fatal("the newest line of a streaming answer is not in view")
		}
		if !b.composerInView() {
			t.Error("the composer is not in the window while an answer streams")
		}
		if !eval[bool](b, `document.getElementById('jump').hidden`) {
			t.Error("Jump to latest offered while following")
		}

		// Scrolled up: the view stays put and offers Jump to latest.
		b.Do("scroll up", chromedp.Evaluate[chromedp.Void](`document.getElementById('scroller').scrollTop = 0`),
			chromedp.WaitVisible(chromedp.CSS(`#jump`)))
		release()
		b.WaitText(`.transcript .msg.assistant:last-child`, "The end.")
		b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
		if top := eval[float64](b, `document.getElementById('scroller').scrollTop`); top > 1 {
			t.Errorf("the view moved to %vpx while scrolled up", top)
		}
		if b.inView(`.transcript .msg.assistant:last-child p`, "The end.") {
			t.Error("the view followed the answer after scrolling up")
		}
		b.WaitText(`#jump`, "Jump to latest")
		b.ShotView("scrolled-up")
		b.Do("jump", chromedp.Click(chromedp.CSS(`#jump`)), chromedp.WaitNotVisible(chromedp.CSS(`#jump`)))
		if !b.inView(`.transcript .msg.assistant:last-child p`, "The end.") {
			t.Error("Jump to latest did not show the newest text")
		}
		if !b.composerInView() {
			t.Error("the composer is not in the window after a long answer")
		}
		if got := eval[string](b, `document.activeElement.id`); got != "message" {
			t.Errorf("after the jump focus is on %q, want the message box", got)
		}
		b.ShotView("long-answer")
	})
}

func TestChatWorkingStateNamesTheTool(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		start, tool := api.hold("start"), api.hold("tool")
		b.open("#/chat/"+stubConv, `#message`)
		b.send(msgTools)
		// From Send to the first event: thinking, and Stop offered.
		b.WaitText(`#working`, "Thinking…")
		b.Do("stop shown", chromedp.WaitVisible(chromedp.CSS(`.composer #cancel`)))
		start()
		// While the tool runs: its name, and the call's line says running.
		b.WaitText(`#working`, "Running docs__search_docs…")
		b.WaitText(`.tool-card[data-call-id="call_s"] .badge`, "running")
		if got := eval[string](b, `document.querySelector('.tool-card[data-call-id="call_s"] .tool-args').textContent`); got != "limit: 5, query: rate limits" {
			t.Errorf("argument summary %q", got)
		}
		// Inspect this turn, while it runs.
		if got := eval[string](b, `[...document.querySelectorAll('.transcript .msg.user')].pop().querySelector('.inspect-link')?.getAttribute('href') ?? ''`); got != "#/inspect/"+stubConv+"?turn=turn_1" {
			t.Errorf("inspect link while running: %q", got)
		}
		b.ShotView("tool-running")
		tool()
		b.WaitText(`.transcript`, "Found it: see docs/limits.md.")
		b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)), chromedp.WaitNotVisible(chromedp.CSS(`#working`)))

		// One line per call: done, and the refused one marked by word and icon.
		type line struct{ State, Icon, Word, Name string }
		lines := eval[[]line](b, `[...document.querySelectorAll('.transcript .tool-card')].slice(-2).map((c) => ({
			State: [...c.classList].filter((k) => k !== 'tool-card').join(' '),
			Icon: c.querySelector('.tool-icon').textContent, Word: c.querySelector('.badge').textContent,
			Name: c.querySelector('.tool-name').textContent }))`)
		want := []line{{"done", "✓", "done", "docs__search_docs"}, {"refused error", "⊘", "refused", "web_search"}}
		if d := cmp.Diff(want, lines); d != "" {
			t.Errorf("tool lines (-want +got):\n%s", d)
		}
		// Closed, a line is one row; opened, it shows arguments and result.
		card := `.tool-card[data-call-id="call_s"]`
		if eval[bool](b, `document.querySelector('`+card+` details').open`) {
			t.Error("a tool line starts open")
		}
		b.Do("open the line", chromedp.Click(chromedp.CSS(card+` summary`)), chromedp.WaitVisible(chromedp.CSS(card+` pre.result`)))
		b.WaitText(card+` pre.args`, `"query": "rate limits"`)
		b.WaitText(card+` pre.result`, "1. Rate limits — docs/limits.md")
		// Inspect this turn, right after it ran.
		if got := eval[int](b, `document.querySelectorAll('.transcript .msg.user .inspect-link[href$="turn=turn_1"]').length`); got != 1 {
			t.Errorf("%d inspect links for the turn after it ran, want 1", got)
		}
		b.ShotView("tool-lines")
	})
}

func TestChatStopAtEachWidth(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)
		b.send(msgSlow)
		b.WaitText(`.transcript`, "Working on it…")
		if !b.composerInView() || !eval[bool](b, `(() => { const r = document.getElementById('cancel').getBoundingClientRect(); return r.bottom <= innerHeight && r.top >= 0; })()`) {
			t.Error("Stop is not in the composer in view")
		}
		b.WaitText(`#cancel`, "Stop")
		b.Do("stop", chromedp.Click(chromedp.CSS(`#cancel`)))
		b.WaitText(`.transcript`, "Turn cancelled.")
		b.Do("composer back", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)), chromedp.WaitEnabled(chromedp.CSS(`#send`)))
		b.sent("POST", convPath+"/cancel")
	})
}

func TestChatCopyAndShowMore(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.grantClipboard()
		b.open("#/chat/"+stubConv, `#message`)
		clipboard := func() string {
			return eval[string](b, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)
		}
		// The agent's message copies as its Markdown source.
		b.Do("copy the answer", chromedp.Click(chromedp.CSS(`.transcript .msg.assistant button.copy`)))
		b.WaitText(`.transcript .msg.assistant .copy-status`, "Copied")
		if got := clipboard(); got != "Hello **Ana**. How can I help?" {
			t.Errorf("copied %q, want the answer's raw text", got)
		}
		b.Do("copy the question", chromedp.Click(chromedp.CSS(`.transcript .msg.user button.copy`)))
		b.WaitText(`.transcript .msg.user .copy-status`, "Copied")
		if got := clipboard(); got != "Hi there" {
			t.Errorf("copied %q, want the message", got)
		}

		// A long message is collapsed behind Show more.
		var long strings.Builder
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&long, "Log line %d: everything is fine\n", i)
		}
		b.send(strings.TrimSpace(long.String()))
		user := `.transcript .msg.user:nth-last-child(2)`
		b.WaitText(`.transcript`, "You said: Log line 1")
		// Once the answer is whole, the view stops moving under the mouse.
		b.Do("collapsed", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)), chromedp.WaitVisible(chromedp.CSS(user+` button.more`)))
		type box struct {
			Clamped  bool
			Expanded string
			Label    string
		}
		state := func() box {
			return eval[box](b, `(() => { const li = document.querySelector('`+user+`');
				const more = li.querySelector('button.more');
				return { Clamped: li.querySelector('.text').scrollHeight > li.querySelector('.text').clientHeight + 1,
					Expanded: more.getAttribute('aria-expanded'), Label: more.textContent }; })()`)
		}
		if d := cmp.Diff(box{true, "false", "Show more"}, state()); d != "" {
			t.Errorf("a long message (-want +got):\n%s", d)
		}
		// By keyboard: the page may still scroll under a pointer (the view
		// follows the answer until the scroll up arrives).
		b.Do("show more", chromedp.Focus(chromedp.CSS(user+` button.more`)), chromedp.KeyEvent("\r"))
		if d := cmp.Diff(box{false, "true", "Show less"}, state()); d != "" {
			t.Errorf("after Show more (-want +got):\n%s", d)
		}
		if got := eval[int](b, `document.querySelectorAll('.transcript .msg.user:first-of-type button.more:not([hidden])').length`); got != 0 {
			t.Errorf("a short message offers Show more")
		}
		b.Do("copy the long message", chromedp.Click(chromedp.CSS(user+` button.copy`)))
		b.WaitText(user+` .copy-status`, "Copied")
		if got := clipboard(); got != strings.TrimSpace(long.String()) {
			t.Errorf("the long message copied as %q", got)
		}
		b.ShotView("copied")
	})
}

func TestChatRefusedMessageBackInComposer(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)
		b.send(msgRefused)
		b.WaitText(`#composer-status .alert`, "you have too many turns running at once")
		if got := eval[string](b, `document.getElementById('message').value`); got != msgRefused {
			t.Errorf("the message box holds %q, want the refused message back", got)
		}
		texts := eval[[]string](b, `[...document.querySelectorAll('.transcript .msg .text')].map((e) => e.textContent)`)
		if d := cmp.Diff([]string{"Hi there", "Hello Ana. How can I help?"}, texts); d != "" {
			t.Errorf("the refused message stays in the transcript (-want +got):\n%s", d)
		}
		if eval[bool](b, `!!document.querySelector('#composer-status .retry')`) {
			t.Error("a refusal offers Retry (it would be refused again)")
		}
		b.ShotView("refused")
		// Sending again (another message) clears the error.
		b.send("Hello again")
		b.WaitText(`.transcript`, "You said: Hello again")
		if eval[bool](b, `!!document.querySelector('#composer-status .alert')`) {
			t.Error("the old error stays after a message went through")
		}
	})
}

func TestChatLostConnectionAndRetry(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)

		// Before the message reached the server: it comes back, with Retry.
		api.down.Store(true)
		b.send("Are you there?")
		b.WaitText(`#composer-status .alert`, "Lost the connection to the Quiver server")
		if got := eval[string](b, `document.querySelector('main').textContent`); strings.Contains(got, "Failed to fetch") {
			t.Errorf("the page says %q", "Failed to fetch")
		}
		if got := eval[string](b, `document.getElementById('message').value`); got != "Are you there?" {
			t.Errorf("the message box holds %q after a lost connection", got)
		}
		b.ShotView("offline")
		api.down.Store(false)
		b.Do("retry", chromedp.Click(chromedp.CSS(`#composer-status .retry`)))
		b.WaitText(`.transcript`, "You said: Are you there?")
		if n := eval[int](b, `[...document.querySelectorAll('.transcript .msg.user .text')].filter((e) => e.textContent === 'Are you there?').length`); n != 1 {
			t.Errorf("the retried message shows %d times", n)
		}

		// Mid-turn: reading the rest fails, the turn says so and offers Retry.
		api.downAfterDrop.Store(true)
		b.send(msgDropped)
		b.WaitText(`.transcript .msg.lost`, "Lost the connection to this turn")
		api.downAfterDrop.Store(false)
		api.down.Store(false)
		b.Do("retry the turn", chromedp.Click(chromedp.CSS(`.transcript .msg.lost .retry`)))
		b.WaitText(`.transcript .msg.assistant:last-child .text`, "Part one, part two.")
		b.Do("notice gone", chromedp.WaitNotPresent(chromedp.CSS(`.transcript .msg.lost`)), chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))

		// A page that cannot load offers Retry too.
		api.down.Store(true)
		b.Do("open agents", chromedp.Evaluate[chromedp.Void](`location.hash = '#/agents'`))
		b.WaitText(`main .alert`, "This page could not load: Lost the connection")
		api.down.Store(false)
		b.Do("retry the page", chromedp.Click(chromedp.CSS(`main .alert .retry`)), chromedp.WaitVisible(chromedp.CSS(`.agent-list`)))
	})
}
