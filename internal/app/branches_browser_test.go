package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/browsertest"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// heardModel is the OpenAI-wire fake answering "reply N" to its Nth
// request and keeping, of each request, the conversation's texts (the
// messages "msg …" and the answers "reply …"): what the model heard.
type heardModel struct {
	*llmtest.Server
	mu    sync.Mutex
	n     int
	heard [][]string
}

func startHeardModel(t *testing.T) *heardModel {
	m := &heardModel{}
	m.Server = llmtest.StartFunc(t, llmtest.OpenAI{}, func(r llm.Request) llmtest.Reply {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.n++
		var h []string
		for _, msg := range r.Messages {
			if strings.HasPrefix(msg.Text, "msg ") || strings.HasPrefix(msg.Text, "reply ") {
				h = append(h, msg.Text)
			}
		}
		m.heard = append(m.heard, h)
		return llmtest.Reply{Text: []string{fmt.Sprintf("reply %d", m.n)}}
	})
	return m
}

// last is what the latest request heard.
func (m *heardModel) last(t *testing.T) []string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.heard) == 0 {
		t.Fatal("the model got no request")
	}
	return m.heard[len(m.heard)-1]
}

// TestBranchesInBrowser drives regenerate, edit-and-resend and the
// version pager in headless Chromium against a real "quiver serve" with
// the OpenAI-wire fake, at desktop (1280×900) and phone (375×740) width:
// each turn's model request holds only the branch shown, the pager pages
// through the versions, and the note about replaced branches shows.
// Screenshots go to $QUIVER_ARTIFACTS/branches.
func TestBranchesInBrowser(t *testing.T) {
	for _, w := range []struct {
		name          string
		width, height int64
		phone         bool
	}{{"desktop", 1280, 900, false}, {"phone", 375, 740, true}} {
		t.Run(w.name, func(t *testing.T) {
			model := startHeardModel(t)
			s := startServe(t, t.TempDir(), model.Server)
			art := ""
			if d := os.Getenv("QUIVER_ARTIFACTS"); d != "" {
				art = filepath.Join(d, "branches")
			}
			b := browsertest.New(t, browsertest.Config{Origin: s.base, Timezone: "UTC", Artifacts: art})
			if w.phone {
				b.Do("phone viewport", chromedp.EmulateViewport(w.width, w.height, chromedp.EmulateMobile, chromedp.EmulateTouch))
			} else {
				b.Do("desktop viewport", chromedp.EmulateViewport(w.width, w.height))
			}
			b.Do("open the login link", chromedp.Navigate(s.login), chromedp.WaitVisible(chromedp.CSS(`#sign-in[data-armed]`)),
				chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
			testBranchesPage(t, b, model, w.name)
		})
	}
}

func testBranchesPage(t *testing.T, b *browsertest.Browser, model *heardModel, width string) {
	heard := func(what string, want ...string) {
		t.Helper()
		if d := cmp.Diff(want, model.last(t)); d != "" {
			t.Errorf("%s: the model heard (-want +got):\n%s", what, d)
		}
	}
	said := func() []string {
		return browsertest.Eval[[]string](b, `[...document.querySelectorAll('.transcript .msg.user > .text, .transcript .msg.assistant > .text')].map(e => e.textContent.trim())`)
	}
	shows := func(what string, want ...string) {
		t.Helper()
		if d := cmp.Diff(want, said()); d != "" {
			t.Errorf("%s: the transcript (-want +got):\n%s", what, d)
		}
	}
	idle := chromedp.WaitNotVisible(chromedp.CSS(`#cancel`))
	send := func(text, reply string) {
		t.Helper()
		b.Do("send "+text, chromedp.SetValue(chromedp.CSS(`#message`), text), chromedp.Click(chromedp.CSS(`#send`)))
		b.WaitText(`.transcript .msg.assistant:last-of-type .text`, reply)
		b.Do("turn ends", idle)
	}

	b.Do("new chat", route("#/chat"), chromedp.WaitVisible(chromedp.CSS(`main[data-route="#/chat"] .new-conv #message`)))
	send("msg one", "reply 1")
	send("msg two", "reply 2")
	b.Do("regenerate offered on the last answer", chromedp.WaitVisible(chromedp.CSS(`.msg.assistant:last-of-type button.regenerate`)))
	if n := browsertest.Eval[int](b, `document.querySelectorAll('button.regenerate').length`); n != 1 {
		t.Errorf("%d regenerate buttons, want 1 (the last answer's)", n)
	}

	// Regenerate: the second answer again, without the one it replaces.
	b.Do("regenerate", chromedp.Click(chromedp.CSS(`button.regenerate`)))
	b.WaitText(`.pager-count`, "2/2")
	b.Do("turn ends", idle)
	shows("regenerated", "msg one", "reply 1", "msg two", "reply 3")
	heard("regenerate", "msg one", "reply 1", "msg two")
	b.WaitText(`#branch-note`, "does not undo")
	b.Shot(width + "-1-regenerated")
	// The branch controls (regenerate, edit, the pager, the note) have no
	// serious or critical accessibility violation, in either theme.
	for _, theme := range []string{"light", "dark"} {
		if !browsertest.HaveAxe(t) {
			break
		}
		b.Do("theme "+theme, chromedp.Evaluate[chromedp.Void](`document.documentElement.dataset.theme = '`+theme+`'`))
		for _, v := range b.Axe() {
			t.Errorf("branches at %s, %s theme: %s", width, theme, v)
		}
	}

	// Page back to the first version and forward again.
	b.Do("previous version", chromedp.Click(chromedp.CSS(`.pager button.prev`)))
	b.WaitText(`.pager-count`, "1/2")
	shows("version 1", "msg one", "reply 1", "msg two", "reply 2")
	b.Shot(width + "-2-paged")
	b.Do("next version", chromedp.Click(chromedp.CSS(`.pager button.next`)))
	b.WaitText(`.pager-count`, "2/2")
	shows("version 2", "msg one", "reply 1", "msg two", "reply 3")

	// Edit the first message in place: Cancel keeps it, Send resends it.
	first := `.transcript .msg.user[data-first="true"]:first-of-type`
	b.Do("edit", chromedp.Click(chromedp.CSS(first+` button.edit`)), chromedp.WaitVisible(chromedp.CSS(first+` .edit-box`)))
	b.WaitText(first+` .edit-form`, "does not undo")
	// The edit form's buttons are clicked through the DOM: a click by
	// coordinates can land on the pinned composer when the transcript
	// scrolls (following the latest answer) between chromedp's scroll
	// into view and its click, which made CI's run of this test flaky.
	b.Do("cancel the edit", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+first+` .cancel-edit').click()`), chromedp.WaitNotPresent(chromedp.CSS(`.edit-form`)))
	shows("edit cancelled", "msg one", "reply 1", "msg two", "reply 3")
	b.Do("edit again", chromedp.Click(chromedp.CSS(first+` button.edit`)),
		chromedp.SetValue(chromedp.CSS(first+` .edit-box`), "msg uno"))
	b.Shot(width + "-3-editing")
	b.Do("send the edit", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+first+` .send-edit').click()`))
	b.WaitText(`.transcript .msg.user:first-of-type .pager-count`, "2/2")
	b.Do("turn ends", idle)
	shows("edited", "msg uno", "reply 4")
	heard("edit", "msg uno")
	send("msg after the edit", "reply 5")
	heard("after the edit", "msg uno", "reply 4", "msg after the edit")
	if wide := browsertest.Eval[bool](b, `document.documentElement.scrollWidth > innerWidth`); wide {
		t.Errorf("the page scrolls sideways at %s width with the pagers and the note", width)
	}
	b.Shot(width + "-4-edited")

	// Back to the first branch: a new message continues it, and the
	// model hears that branch only.
	b.Do("first version of the first message", chromedp.Click(chromedp.CSS(`.transcript .msg.user:first-of-type .pager button.prev`)))
	b.WaitText(`.transcript .msg.user:first-of-type .pager-count`, "1/2")
	shows("first branch", "msg one", "reply 1", "msg two", "reply 3")
	send("msg three", "reply 6")
	heard("first branch continued", "msg one", "reply 1", "msg two", "reply 3", "msg three")
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.transcript .pager`)))
	shows("after a reload", "msg one", "reply 1", "msg two", "reply 3", "msg three", "reply 6")
	b.Shot(width + "-5-continued")
}
