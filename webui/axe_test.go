package webui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/browsertest"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// The accessibility check: axe-core (pinned in webui/testtools, installed
// by scripts/webui-testtools, never served nor embedded) is evaluated in
// every page of the UI through the DevTools protocol (Runtime.evaluate,
// which the page's Content-Security-Policy does not govern), at each
// width and in the light and the dark theme; any violation of impact
// serious or critical fails the test. The same pass saves a screenshot of
// every page as $QUIVER_ARTIFACTS/webui/screens/PAGE-WIDTH-THEME.png.

// auditor checks pages with axe and saves their screenshots.
type auditor struct {
	b     *browser
	width width
	dir   string
}

func newAuditor(t *testing.T, b *browser, w width) *auditor {
	t.Helper()
	dir := artifactDir()
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, "screens")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &auditor{b: b, width: w, dir: dir}
}

// check audits the page as it shows now, in the light and the dark
// theme, and saves a screenshot of each as PAGE-WIDTH-THEME.png (of the
// window when window is set, for pages that scroll inside their own
// panes; else of the whole page). The theme is left as it was.
func (a *auditor) check(page string, window bool) {
	b := a.b
	b.t.Helper()
	was := eval[string](b, `document.documentElement.dataset.theme ?? ''`)
	for _, theme := range []string{"light", "dark"} {
		// No transition: colours are read as they end.
		b.Do("theme "+theme, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.documentElement.dataset.theme = %q`, theme)))
		for _, v := range b.Axe() {
			b.t.Errorf("%s at %s, %s theme: %s", page, a.width.name, theme, v)
		}
		a.shot(fmt.Sprintf("%s-%s-%s", page, a.width.name, theme), window)
	}
	b.Do("theme back", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.documentElement.dataset.theme = %q`, was)))
}

func (a *auditor) shot(name string, window bool) {
	b := a.b
	b.t.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	var png []byte
	var err error
	if window {
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	} else {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(a.dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// newLongBrowser is newBrowser with a lifetime for a test that visits
// every page.
func newLongBrowser(t *testing.T, h http.Handler) *browser {
	t.Helper()
	rec := &recorder{next: h}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	b := browsertest.New(t, browsertest.Config{Origin: srv.URL, Timezone: testZone,
		Artifacts: artifactDir(), Lifetime: 6 * time.Minute})
	return &browser{Browser: b, t: t, srv: srv, rec: rec}
}

// TestAxeEveryPage: every page of the UI, in the states that show the
// most of it, has no serious or critical axe-core violation at either
// width in either theme; each is saved as a screenshot.
func TestAxeEveryPage(t *testing.T) {
	browsertest.RequireAxe(t)
	eachWidth(t, func(t *testing.T, w width) {
		t.Run("stub", func(t *testing.T) {
			api := newStubAPI()
			storedArtifacts(api, "conv_reports")
			b := newLongBrowser(t, api)
			b.use(w)
			a := newAuditor(t, b, w)

			b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
			b.WaitText(`main h1`, "Sign in to Quiver")
			a.check("signed-out", false)
			b.Do("open the login link", chromedp.Navigate(b.srv.URL+"/login?token=login-link"), chromedp.WaitVisible(chromedp.CSS(`#sign-in`)))
			a.check("sign-in-stub", false)
			b.Do("sign in", chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))

			b.open("#/chat", `.new-conv #message`)
			a.check("chat-new", true)
			// A Markdown answer, then a streamed answer with tool lines,
			// paused on a question.
			b.open("#/chat/"+stubConv, `#message`)
			b.send(msgMarkdown)
			b.Do("Markdown answer", chromedp.WaitVisible(chromedp.CSS(`.msg.assistant:not([aria-busy]) .md ol`)),
				chromedp.WaitEnabled(chromedp.CSS(`#send`)))
			b.scriptedTurn()
			a.check("conversation", true)
			// The conversation list (a drawer at phone width), a
			// conversation's menu open, then its rename form.
			b.openList(w)
			li := `#convs li[data-id="` + stubConv + `"]`
			b.Do("menu", chromedp.Click(chromedp.CSS(li+` summary`)))
			b.until("menu open", `document.querySelector('`+li+` details').open`)
			a.check("conversation-menu", true)
			b.Do("rename", chromedp.Click(chromedp.CSS(li+` button.rename`)), chromedp.WaitVisible(chromedp.CSS(`#convs .rename-input`)))
			a.check("conversation-rename", true)
			b.Do("cancel the rename", chromedp.SendKeys(chromedp.CSS(`#convs .rename-input`), "\x1b"), chromedp.WaitNotPresent(chromedp.CSS(`#convs .rename-input`)))
			if w.phone {
				b.Do("close the list", chromedp.SendKeys(chromedp.CSS(`#conv-search`), "\x1b"))
				b.until("list closed", `!(`+drawerShown+`)`)
			}
			b.Do("open Export", chromedp.Click(chromedp.CSS(`.export-menu summary`)))
			b.until("menu open", `document.querySelector('.export-menu').open`)
			a.check("conversation-export", true)
			// The artifact panel: Markdown with its versions, then a CSV
			// table (an overlay at phone width).
			b.open("#/chat/conv_reports", `.tool-card[data-call-id="s1"] .artifact-open`)
			b.Do("open an artifact", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="s1"] .artifact-open`)))
			b.until("panel shown", panelShown)
			b.WaitText(`#artifact-body`, "Second draft")
			a.check("artifact-markdown", true)
			b.Do("close it", chromedp.Click(chromedp.CSS(`#artifact-close`)))
			b.until("panel closed", panelHidden)
			b.Do("open the CSV", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="s3"] .artifact-open`)))
			b.until("table shown", `document.querySelectorAll('#artifact-body tbody tr').length > 0`)
			a.check("artifact-csv", true)

			pages := []struct {
				name, hash, ready string
				then              []chromedp.Action[chromedp.Void] // shows more of the page
			}{
				{name: "inspector", hash: "#/inspect/" + stubConv + "?message=what+is+2%2B2", ready: `table.excluded`},
				{name: "agents", hash: "#/agents", ready: `li[data-agent="assistant"] a.inspect-agent`},
				{name: "agent-editor", hash: "#/agents/assistant", ready: `#definition`},
				{name: "agent-new", hash: "#/agents/new", ready: `#definition`},
				{name: "tools", hash: "#/tools?agent=assistant&tool=fetch_url", ready: `#console-tool:enabled`, then: []chromedp.Action[chromedp.Void]{
					chromedp.Click(chromedp.CSS(`#console-run`)), chromedp.WaitVisible(chromedp.CSS(`#console-result`))}},
				{name: "mcp", hash: "#/mcp", ready: `tr[data-server="docs"]`},
				{name: "settings", hash: "#/settings", ready: `#dtm-form`, then: []chromedp.Action[chromedp.Void]{
					chromedp.SetValue(chromedp.CSS(`#connection-preset`), "lmstudio"),
					chromedp.Click(chromedp.CSS(`#connection-add`)), chromedp.WaitVisible(chromedp.CSS(`#conn-1-name`))}},
				{name: "people", hash: "#/people", ready: `tr[data-user="u2"]`, then: []chromedp.Action[chromedp.Void]{
					chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button[aria-label^="New login link"]`)),
					chromedp.WaitVisible(chromedp.CSS(`#login-link`))}},
				{name: "preferences", hash: "#/preferences", ready: `#prefs-form`},
				{name: "not-found", hash: "#/nowhere", ready: `main h1`},
			}
			for _, p := range pages {
				b.open(p.hash, p.ready)
				if len(p.then) > 0 {
					b.Do("show more of "+p.name, p.then...)
				}
				a.check(p.name, false)
			}
			// A confirmation dialog (People, disabling someone), and the
			// agent editor refusing a definition.
			b.open("#/people", `tr[data-user="u2"] button.danger`)
			b.Do("disable Bruno", chromedp.Click(chromedp.CSS(`tr[data-user="u2"] button.danger`)), chromedp.WaitVisible(chromedp.CSS(`dialog.confirm`)))
			a.check("people-confirm", true) // the window: the dialog is placed in it
			b.Do("answer no", chromedp.Click(chromedp.CSS(`dialog.confirm button[value="no"]`)), chromedp.WaitNotPresent(chromedp.CSS(`dialog.confirm`)))
			b.open("#/agents/new", `#definition`)
			b.Do("save an invalid agent", chromedp.SetValue(chromedp.CSS(`#definition`), "name: x\nmodel: openai:gpt-4.1-mini\ncolour: red\n"),
				chromedp.Click(chromedp.CSS(`.agent-form button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`.form-status .alert`)))
			a.check("agent-refused", false)
		})

		t.Run("httpapi", func(t *testing.T) {
			st, _, b := realAPI(t)
			b.use(w)
			a := newAuditor(t, b, w)
			b.open("#/preferences", `#tokens-link`)
			b.Do("open API tokens", chromedp.Click(chromedp.CSS(`#tokens-link`)), chromedp.WaitVisible(chromedp.CSS(`#token-form`)))
			b.Do("create", chromedp.SetValue(chromedp.CSS(`#token-label`), "ci"),
				chromedp.Click(chromedp.CSS(`#token-create`)), chromedp.WaitVisible(chromedp.CSS(`#new-token`)))
			a.check("api-tokens", false)

			// Memories: Ana's and the shared ones, one being edited.
			now0 := clock.Now().UTC()
			putMemory(t, st, "ana", "m1", "Ana prefers tea to coffee", now0)
			putMemory(t, st, "", "ms", "The office is closed on public holidays", now0)
			b.open("#/memories", `#memories-shared li[data-memory="ms"]`)
			a.check("memories", false)
			b.Do("edit a memory", chromedp.Click(chromedp.CSS(`li[data-memory="m1"] button.edit-memory`)), chromedp.WaitVisible(chromedp.CSS(`#memory-edit-m1`)))
			a.check("memories-edit", false)

			// Budgets: Ana's month with one used up, and the People
			// page's budgets with the default and Ana's own set, and a
			// refused amount.
			for _, bu := range []store.Budget{{UserID: store.BudgetEachPerson, CostMicros: 5_000_000}, {UserID: "ana", Tokens: 1000}} {
				bu.OrgID, bu.UpdatedAt = "org_a", now0
				if err := st.PutBudget(context.Background(), bu); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.PutUsage(context.Background(), store.Usage{OrgID: "org_a", UserID: "ana", ConversationID: "c0", TurnID: "t0", Step: 1,
				Model: "openai:gpt-4.1-mini", InputTokens: 900, OutputTokens: 300, CostMicros: 1_250_000, CreatedAt: now0}); err != nil {
				t.Fatal(err)
			}
			b.open("#/preferences", `#my-budget-exceeded`)
			a.check("preferences-budget", false)
			b.open("#/people", `#budgets tr[data-who="ana"]`)
			b.Do("a refused amount", chromedp.SetValue(chromedp.CSS(`#budget-cost`), "five"), chromedp.Click(chromedp.CSS(`#budget-save`)),
				chromedp.WaitVisible(chromedp.CSS(`#budget-invalid`)))
			a.check("people-budgets", false)

			// Attachments: a chip stored, one refused, then a message
			// with its file in the transcript.
			files := writeFiles(t, map[string][]byte{"notes.md": []byte("# Notes\nFriday.\n"), "photo.png": binaryFile()})
			b.open("#/chat", `.new-conv #attach`)
			b.Do("attach", chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{files["notes.md"]}),
				chromedp.WaitVisible(chromedp.CSS(chip("notes.md")+`[data-state="ready"]`)),
				chromedp.SetUploadFiles(chromedp.CSS(`#attach-input`), []string{files["photo.png"]}),
				chromedp.WaitVisible(chromedp.CSS(chip("photo.png")+`[data-state="error"]`)))
			a.check("chat-attachments", true)
			b.send("Read the notes")
			b.Do("sent", chromedp.WaitVisible(chromedp.CSS(`.transcript .msg-file a`)), chromedp.WaitEnabled(chromedp.CSS(`#send`)))
			a.check("chat-attached", true)

			// Knowledge on the agent page: one indexing, one failed, one
			// ready.
			putKnowledge(t, st)
			b.open("#/agents/assistant", `#knowledge-list tr[data-status="indexing"]`)
			a.check("agent-knowledge", false)

			// httpapi's login pages: a working link (not used), a used
			// one, and another account's.
			ctx := context.Background()
			now := clock.Now().UTC()
			if err := st.CreateUser(ctx, store.User{ID: "bruno", OrgID: "org_a", DisplayName: "Bruno Costa", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			issue := func(user string) string {
				link, err := (&accounts.Service{Store: st}).Issue(ctx, store.Credential{Kind: store.CredLoginLink, OrgID: "org_a", UserID: user,
					CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				return link
			}
			func() { // signed out, so the link's page offers to sign in
				ctx, cancel := b.Step()
				defer cancel()
				if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
					t.Fatalf("clear cookies: %v", err)
				}
			}()
			b.Do("open a link", chromedp.Navigate(b.srv.URL+"/login?token="+issue("ana")), chromedp.WaitVisible(chromedp.CSS(`#sign-in[data-armed]`)))
			a.check("login-sign-in", false)
			b.Do("sign in", chromedp.Click(chromedp.CSS(`#sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#nav`)))
			b.Do("open a used link", chromedp.Navigate(b.srv.URL+"/login?token=not-a-working-link"), chromedp.WaitVisible(chromedp.CSS(`.login-card h1`)))
			b.WaitText(`.login-card h1`, "This login link does not work")
			a.check("login-failed", false)
			b.Do("open Bruno's link", chromedp.Navigate(b.srv.URL+"/login?token="+issue("bruno")), chromedp.WaitVisible(chromedp.CSS(`.login-card h1`)))
			b.WaitText(`.login-card h1`, "You are already signed in as someone else")
			a.check("login-other", false)
		})
	})
}
