package webui_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// A new chat and the conversation list, at desktop and phone width: the
// first message creates the conversation (nothing before), the list is
// grouped by date, and conversations are renamed, deleted and searched.

// openList makes the conversation list usable: at phone width it is a
// drawer, opened with its toggle.
func (b *browser) openList(w width) {
	b.t.Helper()
	if !w.phone || eval[bool](b, drawerShown) {
		return
	}
	b.Do("open the list", chromedp.Click(chromedp.CSS(`#convs-toggle`)))
	b.until("list open", drawerShown+` && document.getElementById('convs').getBoundingClientRect().left >= 0`)
}

// convMenu opens a conversation's menu in the list and clicks action
// ("rename" or "delete").
func (b *browser) convMenu(id, action string) {
	b.t.Helper()
	li := fmt.Sprintf(`#convs li[data-id=%q]`, id)
	b.Do("menu of "+id, chromedp.Click(chromedp.CSS(li+` summary`)))
	b.until("menu open", fmt.Sprintf(`document.querySelector('%s details').open`, li))
	b.Do(action+" "+id, chromedp.Click(chromedp.CSS(li+` button.`+action)))
	b.until("menu closed", fmt.Sprintf(`!document.querySelector('%s details')?.open`, li))
}

// listed returns the list's groups: heading and titles.
type group struct {
	Heading string
	Titles  []string
}

func (b *browser) listed() []group {
	b.t.Helper()
	return eval[[]group](b, `[...document.querySelectorAll('#convs .conv-group')].map((g) => ({
		Heading: g.querySelector('h3').textContent,
		Titles: [...g.querySelectorAll('.conv-title')].map((e) => e.textContent) }))`)
}

// firstMessagePath is a first message's path: to an id the page made
// (a random UUID).
var firstMessagePath = regexp.MustCompile(`^/api/conversations/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/messages$`)

func TestNewChatStartsOnFirstMessage(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		b.open("#/chat", `.new-conv #message`)
		b.WaitText(`main h1`, "New chat")
		b.WaitText(`.landing`, "What can I help with?")
		if got := eval[string](b, `document.getElementById('new-agent').value`); got != "assistant" {
			t.Errorf("agent picked %q", got)
		}
		if n := len(b.requests("POST", "/api/conversations")); n != 0 {
			t.Fatalf("a new chat stored %d conversations before any message", n)
		}
		b.ShotView("new-chat")

		// As over plain HTTP to a LAN address (not a secure context):
		// no crypto.randomUUID, the page makes the UUID itself
		// (TestModelPicker's new chat uses randomUUID).
		b.Do("no randomUUID", chromedp.Evaluate[chromedp.Void](`void Object.defineProperty(Crypto.prototype, 'randomUUID', { value: undefined })`))
		api.mu.Lock()
		had := len(api.convs)
		api.mu.Unlock()
		// A refused first message: nothing is stored (no conversation
		// made before it, none to delete after) and the message is back
		// in the composer.
		b.send(msgRefused)
		b.WaitText(`#composer-status .alert`, "too many turns")
		if got := eval[string](b, `document.getElementById('message').value + '|' + location.hash`); got != msgRefused+"|#/chat" {
			t.Errorf("after the refusal: box and address %q", got)
		}
		var refused []request
		for _, r := range b.rec.recorded() {
			if r.Method != "GET" && strings.HasPrefix(r.Path, "/api/conversations") {
				refused = append(refused, r)
			}
		}
		if len(refused) != 1 || !firstMessagePath.MatchString(refused[0].Path) || refused[0].Status != http.StatusTooManyRequests ||
			!cmp.Equal(refused[0].Body, map[string]any{"message": msgRefused, "agent": "assistant"}) {
			t.Errorf("the refused first message sent %+v, want only its POST …/messages to an id of the page's making", refused)
		}
		api.mu.Lock()
		stored := len(api.convs)
		api.mu.Unlock()
		if stored != had {
			t.Errorf("the stub holds %d conversations after the refusal, want the %d it had", stored, had)
		}

		// The first message that goes through stores the conversation.
		b.send("Plan my week")
		b.WaitText(`.transcript`, "You said: Plan my week")
		b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)))
		b.WaitText(`main h1`, "Plan my week") // the title the server gave it
		id := strings.TrimPrefix(eval[string](b, `location.hash`), "#/chat/")
		if !firstMessagePath.MatchString("/api/conversations/" + id + "/messages") {
			t.Fatalf("address #/chat/%s, want the new conversation's", id)
		}
		if n := len(b.requests("POST", "/api/conversations")); n != 0 {
			t.Errorf("POST /api/conversations sent %d times, want none", n)
		}
		if got := b.sent("POST", "/api/conversations/"+id+"/messages").Body; !cmp.Equal(got, map[string]any{"message": "Plan my week", "agent": "assistant"}) {
			t.Errorf("first message %v", got)
		}
		b.openList(w)
		if got := b.listed(); len(got) == 0 || got[0].Heading != "Today" || got[0].Titles[0] != "Plan my week" {
			t.Errorf("list after the first message: %+v", got)
		}
		if got := eval[string](b, `document.querySelector('#convs li[data-id="`+id+`"] a').getAttribute('aria-current')`); got != "page" {
			t.Errorf("the new conversation is not marked open: %q", got)
		}
		b.Do("the conversation's tools", chromedp.WaitVisible(chromedp.CSS(`.export-menu`)), chromedp.WaitVisible(chromedp.CSS(`#inspect-draft`)))
		b.ShotView("first-message")
		b.checkHeaders(stubCSRF)
	})
}

// wantGroups is how the list groups the stub's conversations seen now in
// zone: the UI's rule (calendar days in the browser's zone), written
// again here.
func wantGroups(api *stubAPI, zone *time.Location) []group {
	now := time.Now().In(zone)
	day := func(t time.Time) time.Time {
		t = t.In(zone)
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, zone)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	var cs []*stubConversation
	for _, c := range api.convs {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *stubConversation) int { return b.Updated.Compare(a.Updated) })
	var out []group
	for _, c := range cs {
		days := int(day(now).Sub(day(c.Updated)).Hours()/24 + 0.5)
		var h string
		switch {
		case days <= 0:
			h = "Today"
		case days == 1:
			h = "Yesterday"
		case days <= 7:
			h = "Previous 7 days"
		case days <= 30:
			h = "Previous 30 days"
		default:
			h = c.Updated.In(zone).Format("January 2006")
		}
		title := c.Title
		if title == "" {
			title = "Chat with " + c.Agent
		}
		if len(out) == 0 || out[len(out)-1].Heading != h {
			out = append(out, group{Heading: h})
		}
		out[len(out)-1].Titles = append(out[len(out)-1].Titles, title)
	}
	return out
}

func TestConversationListRenameDeleteSearch(t *testing.T) {
	zone, err := time.LoadLocation(testZone)
	if err != nil {
		t.Fatal(err)
	}
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		api.addDated(zone)
		b.open("#/chat/"+stubConv, `#message`)
		b.openList(w)
		want := wantGroups(api, zone)
		if d := cmp.Diff(want, b.listed()); d != "" {
			t.Errorf("groups (-want +got):\n%s", d)
		}
		if len(want) < 6 {
			t.Fatalf("the fixtures make %d groups, want at least 6 (each rule)", len(want))
		}
		b.ShotView("list")

		// Rename one, then the open one (its heading follows).
		b.convMenu("c_week", "rename")
		b.Do("new title", chromedp.SetValue(chromedp.CSS(`#convs .rename-input`), "Release notes v2"),
			chromedp.Click(chromedp.CSS(`#convs .rename-form button[type=submit]`)))
		b.WaitText(`#convs li[data-id="c_week"]`, "Release notes v2")
		b.WaitText(`#convs-status`, "Renamed to “Release notes v2”.")
		if d := cmp.Diff(map[string]any{"title": "Release notes v2"}, b.sent("PATCH", "/api/conversations/c_week").Body); d != "" {
			t.Errorf("rename body (-want +got):\n%s", d)
		}
		b.convMenu(stubConv, "rename")
		b.Do("empty title", chromedp.SetValue(chromedp.CSS(`#convs .rename-input`), "  "),
			chromedp.Click(chromedp.CSS(`#convs .rename-form button[type=submit]`)))
		b.WaitText(`#convs-status .alert`, "A title cannot be empty.")
		b.Do("title", chromedp.SetValue(chromedp.CSS(`#convs .rename-input`), "Greetings"),
			chromedp.Click(chromedp.CSS(`#convs .rename-form button[type=submit]`)))
		b.WaitText(`main h1`, "Greetings")

		// Delete: kept when the answer is no; refused while a turn runs.
		b.convMenu("c_week", "delete")
		b.confirmDialog("Delete the conversation “Release notes v2”?", "no")
		if n := len(b.requests("DELETE", "/api/conversations/c_week")); n != 0 {
			t.Fatalf("deleted after No (%d requests)", n)
		}
		b.convMenu("c_week", "delete")
		b.confirmDialog("Delete the conversation “Release notes v2”?", "yes")
		b.Do("gone", chromedp.WaitNotPresent(chromedp.CSS(`#convs li[data-id="c_week"]`)))
		b.WaitText(`#convs-status`, "Deleted “Release notes v2”.")
		b.convMenu("c_busy", "delete")
		b.confirmDialog("Delete the conversation “Long report”?", "yes")
		b.WaitText(`#convs-status .alert`, "Not deleted: a turn of this conversation is running")
		b.Do("kept", chromedp.WaitVisible(chromedp.CSS(`#convs li[data-id="c_busy"]`)))

		// Search by title, by what the person wrote, and with no match.
		search := func(q string) {
			b.Do("search "+q, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById('conv-search').value = %q`, q)),
				chromedp.SendKeys(chromedp.CSS(`#conv-search`), "\r"))
		}
		search("hanoi")
		b.until("one result", `[...document.querySelectorAll('#convs .conv-title')].map((e) => e.textContent).join() === 'Trip to Hanoi'`)
		search("autumn")
		b.until("found by its text", `[...document.querySelectorAll('#convs .conv-title')].map((e) => e.textContent).join() === 'Hiring plan'`)
		b.ShotView("search")
		search("zzz")
		b.WaitText(`#convs .empty`, "No conversation matches “zzz”.")
		search("")
		b.until("all again", `document.querySelectorAll('#convs .conv-title').length === 6`)
		var queries []string
		for _, r := range b.requests("GET", "/api/conversations") {
			queries = append(queries, r.Query)
		}
		// (The pages opened before asked for the whole list.)
		if len(queries) < 4 {
			t.Fatalf("list requests %q", queries)
		}
		if d := cmp.Diff([]string{"q=hanoi", "q=autumn", "q=zzz", ""}, queries[len(queries)-4:]); d != "" {
			t.Errorf("list requests (-want +got):\n%s", d)
		}

		// Deleting the open conversation leaves it for a new chat.
		b.openList(w)
		b.convMenu(stubConv, "delete")
		b.confirmDialog("Delete the conversation “Greetings”?", "yes")
		b.WaitText(`main h1`, "New chat")
		if got := eval[string](b, `location.hash`); got != "#/chat" {
			t.Errorf("after deleting the open conversation the page is at %q", got)
		}
		b.checkHeaders(stubCSRF)
	})
}

func TestConversationListWithoutManageEndpoints(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		api.noManage.Store(true)
		b.open("#/chat/"+stubConv, `#message`)
		b.openList(w)
		b.convMenu(stubConv, "rename")
		b.Do("rename", chromedp.SetValue(chromedp.CSS(`#convs .rename-input`), "New name"),
			chromedp.Click(chromedp.CSS(`#convs .rename-form button[type=submit]`)))
		b.WaitText(`#convs-status .alert`, "This server cannot rename conversations yet (HTTP 405).")
		b.Do("cancel", chromedp.Click(chromedp.CSS(`#convs .rename-form button[type=button]`)))
		b.convMenu(stubConv, "delete")
		b.confirmDialog("Delete the conversation", "yes")
		b.WaitText(`#convs-status .alert`, "This server cannot delete conversations yet (HTTP 405).")
		b.Do("still listed", chromedp.WaitVisible(chromedp.CSS(`#convs li[data-id="conv_1"]`)))
	})
}
