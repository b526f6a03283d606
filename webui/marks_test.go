package webui_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// shownMarks is what a message's marks row says, by seq.
type shownMarks struct {
	Seq       string
	Reactions []string // each reaction's accessible name
	Pinned    bool
	Edited    bool
	Deleted   string // the deleted message's text
	Thread    string // the thread link's target
}

func (b *browser) marks() []shownMarks {
	b.t.Helper()
	return eval[[]shownMarks](b, `[...document.querySelectorAll('.transcript li.msg[data-seq]')].map((li) => ({
		Seq: li.dataset.seq,
		Reactions: [...li.querySelectorAll('.reactions li')].map((r) => r.getAttribute('aria-label')),
		Pinned: Boolean(li.querySelector('.mark.pin')),
		Edited: Boolean(li.querySelector('.mark.edited')),
		Deleted: li.classList.contains('deleted') ? li.querySelector('.text').textContent : '',
		Thread: li.querySelector('a.mark.thread')?.getAttribute('href') ?? '',
	}))`)
}

// TestMessageMarks: a stored transcript shows its reactions, pin,
// edited and deleted notes and thread link; the pinned list opens; a
// thread links back to its parent; a turn's message tools change the
// transcript as they run; in English and Vietnamese, with no axe
// violation, at each width.
func TestMessageMarks(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		api.addMarked()
		b.open("#/chat/"+stubMarked, `.transcript li.msg[data-seq="5"]`)
		want := []shownMarks{
			{Seq: "1", Reactions: []string{"👍: 2 (including you and the agent)"}},
			{Seq: "2", Pinned: true, Edited: true, Thread: "#/chat/" + stubThread},
			{Seq: "3", Deleted: "This message was deleted."},
			{Seq: "4"},
			{Seq: "5"},
		}
		if d := cmp.Diff(want, b.marks(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("stored marks (-want +got):\n%s", d)
		}
		newAuditor(t, b, w).check("marks", true)

		// The pinned list.
		b.Do("open the pins", chromedp.Click(chromedp.CSS(`#pins-toggle`)))
		b.WaitText(`#pins-list`, "Fly on Tuesday.")
		b.Do("go to the pin", chromedp.Click(chromedp.CSS(`#pins-list .pin-entry`)))
		if !eval[bool](b, `document.activeElement !== null && !document.querySelector('.pins-menu').open`) {
			t.Error("the pins menu stays open after choosing a pin")
		}

		// A turn's tools change the transcript as they run.
		b.send(msgMarks)
		b.WaitText(`.transcript`, "Done: pinned and noted.")
		b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
		want[3] = shownMarks{Seq: "4", Reactions: []string{"🎉: 1 (including the agent)"}, Pinned: true}
		want[4] = shownMarks{Seq: "5", Edited: true, Thread: "#/chat/" + stubThread}
		if d := cmp.Diff(want, b.marks(), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("marks after the turn (-want +got):\n%s", d)
		}
		b.WaitText(`.transcript li.msg[data-seq="5"] .text`, "with breakfast")

		// The thread, and back.
		b.Do("open the thread", chromedp.Click(chromedp.CSS(`li.msg[data-seq="2"] a.mark.thread`)))
		b.WaitText(`.thread-parent`, "A thread of Trip plans")
		b.WaitText(`.transcript`, "Let's pick the flight here.")
		b.Do("back to the parent", chromedp.Click(chromedp.CSS(`#thread-parent`)))
		b.Do("parent shown", chromedp.WaitVisible(chromedp.CSS(`.transcript li.msg[data-seq="5"]`)))

		// In Vietnamese.
		b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
		b.WaitText(`li.msg[data-seq="3"] .text`, "Tin nhắn này đã bị xoá.")
		b.WaitText(`li.msg[data-seq="2"] .mark.pin`, "Đã ghim")
		b.WaitText(`li.msg[data-seq="2"] a.mark.thread`, "Mở chuỗi thảo luận")
		b.ShotView("marks-vi")
	})
}
