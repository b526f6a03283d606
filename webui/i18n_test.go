package webui_test

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// words is what the chat and the shell show, in the page's language.
type words struct {
	Lang, Nav, Heading, Placeholder, Send, Stored string
}

func (b *browser) words() words {
	b.t.Helper()
	return eval[words](b, `({ Lang: document.documentElement.lang, Nav: document.querySelector('#nav a[data-page="chat"]').textContent,
		Heading: document.querySelector('main h1').textContent, Placeholder: document.getElementById('message').placeholder,
		Send: document.getElementById('send').textContent, Stored: localStorage.getItem('quiver.lang') ?? '' })`)
}

func TestLanguageSwitch(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat/"+stubConv, `#message`)
		english := words{"en", "Chat", "Chat with assistant", "Write a message… (Enter sends, Shift+Enter adds a line)", "Send", ""}
		if d := cmp.Diff(english, b.words()); d != "" {
			t.Errorf("an en-US browser (-want +got):\n%s", d)
		}
		b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
		b.WaitText(`main h1`, "Trò chuyện với assistant")
		vietnamese := words{"vi", "Trò chuyện", "Trò chuyện với assistant", "Viết tin nhắn… (Enter để gửi, Shift+Enter để xuống dòng)", "Gửi", "vi"}
		if d := cmp.Diff(vietnamese, b.words()); d != "" {
			t.Errorf("after choosing Vietnamese (-want +got):\n%s", d)
		}
		// A turn in Vietnamese: the tool lines, the usage, the copy button.
		b.send(msgScripted)
		b.Do("turn ends", chromedp.WaitVisible(chromedp.CSS(`button.suggested`)), chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
		b.WaitText(`.tool-card[data-call-id="call_2"] .badge`, "lỗi")
		b.WaitText(`#usage`, "Lượt vừa rồi: 1.200 token đầu vào (1.000 từ bộ nhớ đệm)")
		b.WaitText(`.transcript .msg.assistant .copy`, "Sao chép")
		b.WaitText(`.pause`, "Câu trả lời gợi ý")
		b.ShotView("vietnamese")
		b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#message`)))
		b.WaitText(`main h1`, "2+2") // the conversation took its title from the message
		if got := b.words(); got.Lang != "vi" || got.Nav != "Trò chuyện" || eval[string](b, `document.getElementById('lang').value`) != "vi" {
			t.Errorf("after a reload: %+v", got)
		}
		b.open("#/chat", `.new-conv #message`)
		b.WaitText(`.landing`, "Tôi có thể giúp gì cho bạn?")
		b.Do("back to English", chromedp.SetValue(chromedp.CSS(`#lang`), "en"))
		b.WaitText(`.landing`, "What can I help with?")
		if got := b.words(); got.Lang != "en" || got.Stored != "en" {
			t.Errorf("back in English: %+v", got)
		}
	})
}

// TestLanguageFromBrowser: a browser whose languages put Vietnamese first
// starts in Vietnamese, the sign-in page too, with nothing stored.
func TestLanguageFromBrowser(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	ua := eval[string](b, `navigator.userAgent`)
	ctx, cancel := b.Step()
	if _, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: "vi-VN,vi;q=0.9,en;q=0.5"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	b.Do("reload", chromedp.Reload())
	b.WaitText(`main h1`, "Đăng nhập vào Quiver")
	if got := eval[[]string](b, `navigator.languages`); len(got) == 0 || got[0] != "vi-VN" {
		t.Fatalf("navigator.languages %q: the override did not take", got)
	}
	b.WaitText(`main`, "liên kết đăng nhập dùng một lần")
	b.login()
	b.WaitText(`main h1`, "Cuộc trò chuyện mới")
	if got := b.words(); got.Lang != "vi" || got.Stored != "" || got.Send != "Gửi" {
		t.Errorf("a Vietnamese browser: %+v", got)
	}
	if got := eval[string](b, `document.getElementById('theme').selectedOptions[0].textContent`); got != "Theo hệ thống" {
		t.Errorf("the theme choice reads %q", got)
	}
	b.ShotView("vietnamese-browser")
}
