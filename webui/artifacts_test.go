package webui_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The artifact panel (artifacts.js) against the stub's artifacts
// (stub_artifacts_test.go).

const (
	panelShown  = `(() => { const p = document.getElementById('artifacts'); return !!p && !p.hidden && p.getBoundingClientRect().width > 0; })()`
	panelHidden = `document.getElementById('artifacts').hidden`
)

// listenFrames records the messages framed documents post to the page,
// with their origin, in window.__framed.
func (b *browser) listenFrames() {
	b.t.Helper()
	b.Do("listen to frames", chromedp.Evaluate[chromedp.Void](`window.__framed = [];
		addEventListener('message', (e) => window.__framed.push({ ...e.data, from: e.origin }))`))
}

// framed is what a framed document that said it is version posted.
type framed struct {
	Artifact, Reached, Origin, From string
}

func (b *browser) framedSaid(version string) framed {
	b.t.Helper()
	b.until("the framed "+version+" reported", fmt.Sprintf(`window.__framed.some((m) => m.artifact === %q)`, version))
	return eval[framed](b, fmt.Sprintf(`(() => { const m = window.__framed.find((m) => m.artifact === %q);
		return { Artifact: m.artifact, Reached: m.reached, Origin: m.origin, From: m.from }; })()`, version))
}

// TestArtifactLiveTurnOpensSandboxedFrame: a turn creates an HTML
// artifact (the card says the agent is still checking it), saves it
// (the card offers to open it), and the panel frames it in a sandbox
// without same-origin access whose script cannot reach the page; a later
// change in the same turn shows in the open panel.
func TestArtifactLiveTurnOpensSandboxedFrame(t *testing.T) {
	atEachWidth(t, func(t *testing.T, api *stubAPI, b *browser, w width) {
		draft := api.hold("artifact-draft")
		saved := api.hold("artifact-saved")
		b.open("#/chat/"+stubConv, `#message`)
		b.listenFrames()
		title := eval[string](b, `document.title`)
		b.send(msgArtifact)
		b.WaitText(`.tool-card[data-call-id="call_a1"] .artifact-action`, "The agent is still checking “Q3”")
		if n := eval[int](b, `document.querySelectorAll('.artifact-open').length`); n != 0 {
			t.Errorf("%d Open artifact buttons while the artifact is a draft", n)
		}
		draft()
		b.WaitText(`.tool-card[data-call-id="call_a3"] .artifact-open`, "Open artifact: Q3")
		// The create card follows: the artifact now has a version.
		b.WaitText(`.tool-card[data-call-id="call_a1"] .artifact-open`, "Open artifact: Q3")
		b.WaitText(`#artifacts-button summary`, "Artifacts (1)")

		b.Do("open from the card", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="call_a3"] .artifact-open`)))
		b.until("panel shown", panelShown)
		b.until("focus in the panel", `document.activeElement?.id === 'artifact-h'`)
		b.WaitText(`#artifact-h`, "Q3")
		b.WaitText(`#artifact-version`, "Version 1 of 1")
		type frame struct{ Sandbox, Src string }
		f := eval[frame](b, `(() => { const f = document.querySelector('#artifact-body iframe');
			return { Sandbox: f.getAttribute('sandbox'), Src: f.getAttribute('src') }; })()`)
		if d := cmp.Diff(frame{Sandbox: "allow-scripts", Src: convPath + "/artifacts/art_live/content?version=1"}, f); d != "" {
			t.Errorf("the frame (-want +got):\n%s", d)
		}
		if strings.Contains(f.Sandbox, "allow-same-origin") {
			t.Errorf("sandbox %q allows same-origin", f.Sandbox)
		}
		got := b.framedSaid("v1")
		if got.Reached != "SecurityError" {
			t.Errorf("the framed script reached the page's document: %q", got.Reached)
		}
		if got.Origin != "null" || got.From != "null" {
			t.Errorf("the framed document's origin %q (posted from %q), want the opaque null", got.Origin, got.From)
		}
		if eval[bool](b, `'pwned' in document.body.dataset`) || eval[string](b, `document.title`) != title {
			t.Error("the framed script changed the page's document")
		}
		if w.phone {
			b.until("the panel covers the chat", `(() => { const r = document.getElementById('artifacts').getBoundingClientRect();
				return r.left === 0 && r.width === innerWidth; })()`)
			if !eval[bool](b, `document.querySelector('.thread').inert`) {
				t.Error("the chat behind the overlay is not inert")
			}
		} else if !eval[bool](b, `(() => { const p = document.getElementById('artifacts').getBoundingClientRect();
				const th = document.querySelector('.thread').getBoundingClientRect(); return p.left >= th.right - 1 && th.width > 0; })()`) {
			t.Error("the panel is not beside the chat")
		}
		b.ShotView("live-v1")

		// The rest of the turn changes the artifact: the open panel
		// shows version 2.
		saved()
		b.WaitText(`#artifact-version`, "Version 2 of 2")
		b.until("frame of version 2", `document.querySelector('#artifact-body iframe')?.getAttribute('src')?.endsWith('version=2')`)
		if got := b.framedSaid("v2"); got.Reached != "SecurityError" {
			t.Errorf("version 2 reached the page's document: %q", got.Reached)
		}
		b.Do("turn ends", chromedp.WaitEnabled(chromedp.CSS(`#send`)))
		if eval[bool](b, `'pwned' in document.body.dataset`) {
			t.Error("a framed script changed the page's document")
		}
		b.Do("close", chromedp.Click(chromedp.CSS(`#artifact-close`)))
		b.until("panel closed", panelHidden)
		b.until("focus back on the card's button", `document.activeElement?.matches('.tool-card[data-call-id="call_a3"] .artifact-open')`)
		if w.phone && eval[bool](b, `document.querySelector('.thread').inert`) {
			t.Error("the chat stays inert after the overlay closed")
		}
		b.fits(w, "the chat with its artifacts list")
		if !eval[bool](b, `(() => { const r = document.querySelector('#artifacts-button summary').getBoundingClientRect();
			return r.width > 0 && r.right <= innerWidth; })()`) {
			t.Error("the artifacts list's button is not in the window")
		}
		b.ShotView("closed")
	})
}

// storedArtifacts gives conv a stored turn that wrote six artifacts (a
// Markdown one twice, a CSV of 600 rows, code, Mermaid, an HTML one the
// agent is still checking, an SVG one) and the artifacts themselves.
func storedArtifacts(api *stubAPI, conv string) (csv string) {
	api.convs[conv] = &stubConversation{ID: conv, Agent: "assistant", Title: "Reports",
		Created: time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC), Updated: time.Date(2026, 1, 6, 9, 30, 0, 0, time.UTC)}
	var rows strings.Builder
	rows.WriteString("region,note,amount\r\n\"North, East\",\"said \"\"hi\"\"\nthen left\",12\r\n")
	for i := 2; i <= 600; i++ {
		fmt.Fprintf(&rows, "r%d,plain,%d\n", i, i)
	}
	csv = rows.String()
	api.addArtifact(conv, "art_md", "Plan", "markdown", "# Plan\n\nFirst **draft**.", "# Plan\n\nSecond **draft**, with a [link](https://example.com/).")
	api.addArtifact(conv, "art_csv", "Sales", "csv", csv)
	api.addArtifact(conv, "art_code", "Script", "code", "def total(xs):\n    return sum(xs)\n").Language = "python"
	api.addArtifact(conv, "art_mm", "Flow", "mermaid", "graph TD\n  A-->B\n")
	api.addArtifact(conv, "art_chk", "Poster", "html")
	api.addArtifact(conv, "art_svg", "Logo", "svg", `<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40"><rect width="80" height="40" fill="teal"/></svg>`)
	seq := 0
	msg := func(role, content string, extra ...string) map[string]any {
		seq++
		m := map[string]any{"seq": seq, "turn_id": "turn_a", "role": role, "content": content, "created_at": "2026-01-06T09:00:00Z"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	call := func(id, name, args, result string) []map[string]any {
		return []map[string]any{msg("tool_call", args, "tool_name", name, "tool_call_id", id), msg("tool", result, "tool_name", name, "tool_call_id", id)}
	}
	stored := []map[string]any{msg("user", "Write the reports")}
	for _, c := range [][4]string{
		{"s1", "create_artifact", `{"title":"Plan","kind":"markdown"}`, `Created artifact art_md "Plan" (markdown): saved as version 1, shown to the user.`},
		{"s2", "update_artifact", `{"id":"art_md"}`, `Updated artifact art_md "Plan" (markdown): saved as version 2, shown to the user.`},
		{"s3", "create_artifact", `{"title":"Sales","kind":"csv"}`, `Created artifact art_csv "Sales" (csv): saved as version 1, shown to the user.`},
		{"s4", "create_artifact", `{"title":"Script","kind":"code"}`, `Created artifact art_code "Script" (code, python): saved as version 1, shown to the user.`},
		{"s5", "create_artifact", `{"title":"Flow","kind":"mermaid"}`, `Created artifact art_mm "Flow" (mermaid): saved as version 1, shown to the user.`},
		{"s6", "create_artifact", `{"title":"Poster","kind":"html"}`, `Created artifact art_chk "Poster" (html): draft 1, not inspected yet. Call inspect_artifact to check it, then save_artifact.`},
		{"s7", "create_artifact", `{"title":"Old","kind":"markdown"}`, `Created artifact art_old "Old" (markdown): saved as version 1, shown to the user.`},
		{"s9", "create_artifact", `{"title":"Logo","kind":"svg"}`, `Created artifact art_svg "Logo" (svg): saved as version 1, unchecked (no browser on this server can render it).`},
		{"s8", "calculate", `{"expression":"1+1"}`, `Created artifact art_md "Plan" (markdown): saved as version 1, shown to the user.`},
	} {
		stored = append(stored, call(c[0], c[1], c[2], c[3])...)
	}
	stored = append(stored, msg("assistant", "Done."))
	api.stored = map[string][]map[string]any{conv: stored}
	return csv
}

// TestArtifactReloadedPanel: in a stored conversation, the write tools'
// cards open their artifact (one only drafted says it is being checked,
// one since deleted says so, another tool's card offers nothing); the
// header lists the artifacts; Markdown renders and switching versions
// changes what is shown; Copy copies the version shown and Download
// links it; the CSV is a table of 500 rows of 600; code and Mermaid are
// code blocks; Escape and Close close the panel.
func TestArtifactReloadedPanel(t *testing.T) {
	api := newStubAPI()
	const conv = "conv_reports"
	csv := storedArtifacts(api, conv)
	b := newBrowser(t, api)
	b.login()
	b.grantClipboard()
	b.open("#/chat/"+conv, `.tool-card[data-call-id="s1"] .artifact-open`)
	actions := eval[map[string]string](b, `Object.fromEntries([...document.querySelectorAll('.tool-card')].map((c) =>
		[c.dataset.callId, c.querySelector('.artifact-action')?.textContent ?? '']))`)
	want := map[string]string{
		"s1": "Open artifact: Plan", "s2": "Open artifact: Plan", "s3": "Open artifact: Sales", "s4": "Open artifact: Script",
		"s5": "Open artifact: Flow", "s6": "The agent is still checking “Poster”; it shows here once saved.",
		"s7": "“Old” is no longer in this conversation.", "s8": "", "s9": "Open artifact: Logo",
	}
	if d := cmp.Diff(want, actions); d != "" {
		t.Errorf("the cards' actions (-want +got):\n%s", d)
	}

	// The header's list.
	b.WaitText(`#artifacts-button summary`, "Artifacts (6)")
	b.Do("open the list", chromedp.Click(chromedp.CSS(`#artifacts-button summary`)))
	b.until("list open", `document.getElementById('artifacts-button').open`)
	items := eval[[]string](b, `[...document.querySelectorAll('#artifacts-button .artifact-items button')].map((x) => x.textContent)`)
	if d := cmp.Diff([]string{"Plan Markdown", "Sales CSV", "Script Code", "Flow Mermaid", "Poster HTML, still being checked", "Logo SVG"}, items); d != "" {
		t.Errorf("the list (-want +got):\n%s", d)
	}
	b.Do("open Plan from the list", chromedp.Click(chromedp.CSS(`#artifacts-button button[data-artifact="art_md"]`)))
	b.until("panel shown", panelShown)
	b.WaitText(`#artifact-body`, "Second draft, with a link.")
	b.WaitText(`#artifact-version`, "Version 2 of 2")
	type md struct{ Heading, Strong, Href string }
	if d := cmp.Diff(md{"Plan", "draft", "https://example.com/"}, eval[md](b, `(() => { const m = document.querySelector('#artifact-body .md');
		return { Heading: m.querySelector('h3')?.textContent, Strong: m.querySelector('strong')?.textContent, Href: m.querySelector('a')?.getAttribute('href') }; })()`)); d != "" {
		t.Errorf("the Markdown (-want +got):\n%s", d)
	}
	options := eval[[]string](b, `[...document.querySelectorAll('#artifact-pick option')].map((o) => o.value + '|' + o.textContent)`)
	if len(options) != 2 || !strings.HasPrefix(options[0], "2|Version 2 · updated · ") || !strings.HasPrefix(options[1], "1|Version 1 · created · ") {
		t.Errorf("the version picker: %q", options)
	}
	href := eval[string](b, `document.getElementById('artifact-download').getAttribute('href')`)
	if want := convPath2(conv) + "/artifacts/art_md/content?version=2&download=true"; href != want {
		t.Errorf("download %q, want %q", href, want)
	}

	// Version 1.
	b.Do("pick version 1", chromedp.SetValue(chromedp.CSS(`#artifact-pick`), "1"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('artifact-pick').dispatchEvent(new Event('change'))`))
	b.WaitText(`#artifact-version`, "Version 1 of 2")
	b.WaitText(`#artifact-body`, "First draft.")
	if eval[bool](b, `document.getElementById('artifact-body').textContent.includes('Second')`) {
		t.Error("version 1 still shows version 2's text")
	}
	b.Do("copy", chromedp.Click(chromedp.CSS(`.artifact-tools .copy`)))
	b.WaitText(`.artifact-tools .copy-status`, "Copied")
	if got := b.clipboard(); got != "# Plan\n\nFirst **draft**." {
		t.Errorf("copied %q, want version 1's text", got)
	}
	href = eval[string](b, `document.getElementById('artifact-download').getAttribute('href')`)
	u, err := url.Parse(href)
	if err != nil || u.Path != convPath2(conv)+"/artifacts/art_md/content" || u.Query().Get("version") != "1" || u.Query().Get("download") != "true" {
		t.Errorf("download of version 1: %q", href)
	}
	type got struct {
		Status            int
		Disposition, Body string
	}
	dl := eval[got](b, fmt.Sprintf(`fetch(%q, { headers: { 'X-Timezone': %q } }).then(async (r) => ({ Status: r.status, Disposition: r.headers.get('content-disposition'), Body: await r.text() }))`, href, testZone), chromedp.EvalAwaitPromise)
	if d := cmp.Diff(got{200, `attachment; filename=Plan.markdown`, "# Plan\n\nFirst **draft**."}, dl); d != "" {
		t.Errorf("the download (-want +got):\n%s", d)
	}
	b.ShotView("markdown-v1")

	// Escape closes, focus goes back to the list's button.
	b.Do("Escape", chromedp.SendKeys(chromedp.CSS(`#artifact-pick`), "\x1b"))
	b.until("closed by Escape", panelHidden)
	b.until("focus back on the list", `document.activeElement === document.querySelector('#artifacts-button summary')`)

	// The CSV: a table of 500 of its 600 rows, its quoted field whole.
	b.Do("open Sales", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="s3"] .artifact-open`)))
	b.until("table shown", `document.querySelectorAll('#artifact-body tbody tr').length > 0`)
	type table struct {
		Head  []string
		Rows  int
		First []string
		Last  []string
		Note  string
	}
	tb := eval[table](b, `(() => { const body = document.getElementById('artifact-body'); const rows = body.querySelectorAll('tbody tr');
		const cells = (r) => [...r.cells].map((c) => c.textContent);
		return { Head: cells(body.querySelector('thead tr')), Rows: rows.length, First: cells(rows[0]), Last: cells(rows[rows.length - 1]),
			Note: body.querySelector('#artifact-rows').textContent }; })()`)
	wantTable := table{Head: []string{"region", "note", "amount"}, Rows: 500, First: []string{"North, East", "said \"hi\"\nthen left", "12"},
		Last: []string{"r500", "plain", "500"}, Note: "Showing the first 500 of 600 rows; download it for the rest."}
	if d := cmp.Diff(wantTable, tb); d != "" {
		t.Errorf("the CSV table (-want +got):\n%s", d)
	}
	b.Do("copy the CSV", chromedp.Click(chromedp.CSS(`.artifact-tools .copy`)))
	b.WaitText(`.artifact-tools .copy-status`, "Copied")
	if got := b.clipboard(); got != csv {
		t.Errorf("copied %d characters of the CSV, want all %d", len(got), len(csv))
	}

	// Code and Mermaid: code blocks of their source.
	for _, c := range []struct{ card, lang, code string }{
		{"s4", "python", "def total(xs):\n    return sum(xs)\n"},
		{"s5", "mermaid", "graph TD\n  A-->B\n"},
	} {
		b.Do("open "+c.card, chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="`+c.card+`"] .artifact-open`)))
		b.until(c.card+" shown", fmt.Sprintf(`document.querySelector('#artifact-body .code-block code')?.getAttribute('data-lang') === %q`, c.lang))
		if got := eval[string](b, `document.querySelector('#artifact-body .code-block pre > code').textContent`); got != c.code {
			t.Errorf("%s shows %q, want %q", c.card, got, c.code)
		}
	}
	if n := eval[int](b, `document.querySelectorAll('#artifact-body .code-block .hljs-keyword').length`); n != 0 {
		t.Errorf("Mermaid coloured as a known language (%d keywords)", n)
	}
	b.Do("open the Python again", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="s4"] .artifact-open`)))
	b.until("python coloured", `document.querySelectorAll('#artifact-body .code-block .hljs-keyword').length > 0`)
	b.WaitText(`#artifact-kind`, "Code · python")

	// SVG: framed like HTML.
	b.Do("open the SVG", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="s9"] .artifact-open`)))
	b.until("SVG framed", `document.querySelector('#artifact-body iframe')?.getAttribute('src') === '`+convPath2(conv)+`/artifacts/art_svg/content?version=1'`)
	if got := eval[string](b, `document.querySelector('#artifact-body iframe').getAttribute('sandbox')`); got != "allow-scripts" {
		t.Errorf("the SVG's frame: sandbox %q", got)
	}

	// The one still being checked.
	b.Do("open the list", chromedp.Click(chromedp.CSS(`#artifacts-button summary`)))
	b.Do("open Poster", chromedp.Click(chromedp.CSS(`#artifacts-button button[data-artifact="art_chk"]`)))
	b.WaitText(`#artifact-body`, "The agent is still checking this artifact")
	if n := eval[int](b, `document.querySelectorAll('#artifact-body iframe, #artifact-download, #artifact-pick').length`); n != 0 {
		t.Errorf("a draft-only artifact offers %d frames, downloads or versions", n)
	}
	b.Do("close", chromedp.Click(chromedp.CSS(`#artifact-close`)))
	b.until("closed", panelHidden)
	if n := len(b.requests("GET", convPath2(conv)+"/artifacts/art_chk/content")); n != 0 {
		t.Errorf("the draft's content was asked for %d times", n)
	}
	// The page's own requests carry the zone and the CSRF token; a
	// frame's navigation to …/content carries neither (none is needed).
	for _, r := range b.rec.recorded() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/content") {
			continue
		}
		if r.Timezone != testZone || (r.Method != "GET" && r.CSRF != stubCSRF) {
			t.Errorf("%s %s: X-Timezone %q, X-CSRF-Token %q", r.Method, r.Path, r.Timezone, r.CSRF)
		}
	}
}

func convPath2(conv string) string { return "/api/conversations/" + conv }

// TestArtifactPanelInVietnamese: the panel and the cards speak the
// page's language.
func TestArtifactPanelInVietnamese(t *testing.T) {
	api := newStubAPI()
	const conv = "conv_reports"
	storedArtifacts(api, conv)
	b := newBrowser(t, api)
	b.login()
	b.Do("choose Vietnamese", chromedp.SetValue(chromedp.CSS(`#lang`), "vi"))
	b.WaitText(`main h1`, "Cuộc trò chuyện mới")
	b.open("#/chat/"+conv, `.tool-card[data-call-id="s1"] .artifact-open`)
	b.WaitText(`.tool-card[data-call-id="s1"] .artifact-open`, "Mở artifact: Plan")
	b.WaitText(`.tool-card[data-call-id="s6"] .artifact-action`, "Agent vẫn đang kiểm tra “Poster”")
	b.WaitText(`#artifacts-button summary`, "Artifact (6)")
	b.Do("open", chromedp.Click(chromedp.CSS(`.tool-card[data-call-id="s3"] .artifact-open`)))
	b.WaitText(`#artifact-version`, "Phiên bản 1 / 1")
	b.WaitText(`#artifact-rows`, "Đang hiện 500 dòng đầu trong 600 dòng")
	if got := eval[string](b, `document.getElementById('artifact-close').getAttribute('aria-label')`); got != "Đóng artifact" {
		t.Errorf("the close button's label %q", got)
	}
}
