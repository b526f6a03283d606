package artifacts_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/browser"
	"github.com/quiverhq/quiver/builtin/artifacts"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

var scope = tool.Scope{OrgID: "org1", UserID: "alice", ConversationID: "conv1", TurnID: "t1"}

var (
	chromeOnce sync.Once
	chrome     *browser.Chromium
	chromeErr  error
)

// checker returns the package's one real Chromium; without one the test
// skips, unless QUIVER_REQUIRE_PEERS=1.
func checker(t *testing.T) browser.Checker {
	t.Helper()
	chromeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		chrome, chromeErr = browser.NewChromium(ctx, browser.Options{PageTimeout: 20 * time.Second})
	})
	if chromeErr != nil {
		if errors.Is(chromeErr, browser.ErrUnavailable) && os.Getenv("QUIVER_REQUIRE_PEERS") != "1" {
			t.Skipf("no browser: %v", chromeErr)
		}
		t.Fatal(chromeErr)
	}
	return chrome
}

func TestMain(m *testing.M) {
	code := m.Run()
	if chrome != nil {
		chrome.Close()
	}
	os.Exit(code)
}

// env is the tools over a real SQLite store.
type env struct {
	t     *testing.T
	st    store.Store
	tools map[string]*tool.Tool
	root  string
}

func newEnv(t *testing.T, c browser.Checker, q store.ArtifactQuota) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := t.TempDir()
	cfg := artifacts.Config{Store: st, Workspace: workspace.Config{Root: root}, Quota: q, IDs: &ids.Sequence{},
		Now: func() time.Time { return time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC) }}
	cfg.Checker = c
	if c == nil {
		cfg.Unavailable = "no browser in this test"
	}
	e := &env{t: t, st: st, tools: map[string]*tool.Tool{}, root: root}
	for _, tl := range artifacts.Tools(cfg) {
		e.tools[tl.Name()] = tl
	}
	return e
}

// call runs a tool as dispatch would (schema first) and returns its
// result, failing the test on an infrastructure error.
func (e *env) call(s tool.Scope, name string, args map[string]any) (tool.Result, error) {
	e.t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.tools[name].Run(e.t.Context(), s, b)
	if tool.IsInfra(err) {
		e.t.Fatalf("%s: infrastructure error %v", name, err)
	}
	return res, err
}

func (e *env) ok(name string, args map[string]any) tool.Result {
	e.t.Helper()
	res, err := e.call(scope, name, args)
	if err != nil {
		e.t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func (e *env) refused(name string, args map[string]any, want string) {
	e.t.Helper()
	_, err := e.call(scope, name, args)
	if err == nil || !strings.Contains(err.Error(), want) {
		e.t.Fatalf("%s(%v): %v, want a refusal saying %q", name, args, err, want)
	}
}

func (e *env) artifact(id string) store.Artifact {
	e.t.Helper()
	a, err := e.st.GetArtifact(e.t.Context(), scope.OrgID, scope.ConversationID, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// TestVisualDraftIsCheckedBeforeItSaves: an HTML artifact is a draft the
// user does not see until inspect_artifact has rendered its newest change
// and save_artifact saved it; a change after an inspection needs another.
func TestVisualDraftIsCheckedBeforeItSaves(t *testing.T) {
	e := newEnv(t, checker(t), store.ArtifactQuota{})
	page := `<!doctype html><html><body><h1 id="t">Quarterly results</h1><p>Revenue grew.</p></body></html>`
	res := e.ok("create_artifact", map[string]any{"title": "Q3", "kind": "html", "content": page})
	if !strings.Contains(res.Content, "art_1") || !strings.Contains(res.Content, "draft 1") {
		t.Fatalf("create: %q, want the ID and draft 1", res.Content)
	}
	if a := e.artifact("art_1"); a.Version != 0 || a.Draft == nil {
		t.Fatalf("created: %+v, want only a draft", a)
	}
	e.refused("save_artifact", map[string]any{"id": "art_1"}, "inspect_artifact first")
	res = e.ok("inspect_artifact", map[string]any{"id": "art_1", "viewports": []map[string]int{{"width": 800, "height": 600}, {"width": 375, "height": 700}}})
	if len(res.Images) != 2 || res.Images[0].MIME != "image/png" || !strings.Contains(res.Content, "Inspected draft 1") ||
		!strings.Contains(res.Content, "Page 2 at 375×700") || !strings.Contains(res.Content, "save_artifact") {
		t.Fatalf("inspect: %d images, %q", len(res.Images), res.Content)
	}
	e.ok("update_artifact", map[string]any{"id": "art_1", "edits": []map[string]any{{"old_string": "grew", "new_string": "grew 12%"}}})
	e.refused("save_artifact", map[string]any{"id": "art_1"}, "inspect_artifact first")
	e.ok("inspect_artifact", map[string]any{"id": "art_1"})
	res = e.ok("save_artifact", map[string]any{"id": "art_1"})
	a := e.artifact("art_1")
	if a.Version != 1 || a.Draft != nil || !strings.Contains(a.Content, "grew 12%") || !strings.Contains(res.Content, "version 1") {
		t.Fatalf("saved: %+v, %q", a, res.Content)
	}
	v, err := e.st.GetArtifactVersion(t.Context(), scope.OrgID, scope.ConversationID, "art_1", 1)
	if err != nil || !v.Checked {
		t.Errorf("version 1: %+v, %v; want checked", v, err)
	}
	e.refused("save_artifact", map[string]any{"id": "art_1"}, "no draft")
}

// TestInspectReportsBlockedLoadsAndErrors: what the page tried to load
// and the errors it threw reach the model, and no load leaves the
// browser (package browser's tests prove the walls).
func TestInspectReportsBlockedLoadsAndErrors(t *testing.T) {
	e := newEnv(t, checker(t), store.ArtifactQuota{})
	page := `<html><body><img src="http://169.254.169.254/latest/meta-data"><script>undefinedFunction()</script>
		<div style="width:3000px">wide</div></body></html>`
	e.ok("create_artifact", map[string]any{"title": "Leaky", "kind": "html", "content": page})
	res := e.ok("inspect_artifact", map[string]any{"id": "art_1"})
	for _, want := range []string{"blocked load: http://169.254.169.254/latest/meta-data", "undefinedFunction", "wider than the viewport", "problem(s) above"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("inspect result lacks %q:\n%s", want, res.Content)
		}
	}
}

// TestMeasureAndPrint: measure_layout reports the boxes selectors match;
// print_pdf writes a PDF into the person's workspace and refuses a path
// that is not a PDF's.
func TestMeasureAndPrint(t *testing.T) {
	e := newEnv(t, checker(t), store.ArtifactQuota{})
	e.ok("create_artifact", map[string]any{"title": "Card", "kind": "svg",
		"content": `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect id="r" x="10" y="20" width="300" height="100" fill="teal"/></svg>`})
	res := e.ok("measure_layout", map[string]any{"id": "art_1", "selectors": []string{"#r"}})
	if !strings.Contains(res.Content, "x 10, y 20, 300×100") {
		t.Errorf("measure: %q, want the rect's box", res.Content)
	}
	e.refused("print_pdf", map[string]any{"id": "art_1", "path": "card.png"}, "must end in .pdf")
	e.refused("print_pdf", map[string]any{"id": "art_1", "path": "../card.pdf"}, "")
	e.ok("print_pdf", map[string]any{"id": "art_1", "path": "out/card.pdf"})
	matches, _ := filepath.Glob(filepath.Join(e.root, "*", "*", "out", "card.pdf"))
	if len(matches) != 1 {
		t.Fatalf("PDF files written: %v, want one in the person's workspace", matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil || !strings.HasPrefix(string(data), "%PDF-") {
		t.Errorf("the file is not a PDF: %.20q, %v", data, err)
	}
	if _, err := exec.LookPath("pdfinfo"); err == nil {
		out, err := exec.Command("pdfinfo", matches[0]).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Pages:") {
			t.Errorf("pdfinfo: %s %v", out, err)
		}
	}
	e.refused("measure_layout", map[string]any{"id": "art_1", "selectors": []string{"div:has("}}, "")
}

// TestTextArtifactsSaveAsVersions: the other kinds save each change as a
// version; update_artifact applies its edits all or none, with a message
// saying which edit failed.
func TestTextArtifactsSaveAsVersions(t *testing.T) {
	e := newEnv(t, nil, store.ArtifactQuota{})
	e.ok("create_artifact", map[string]any{"title": "Plan", "kind": "markdown", "content": "# Plan\n\n- Hà Nội\n- Huế\n"})
	e.ok("update_artifact", map[string]any{"id": "art_1", "edits": []map[string]any{
		{"old_string": "Huế", "new_string": "Huế\n- Hội An"}, {"old_string": "# Plan", "new_string": "# Trip plan"}}})
	a := e.artifact("art_1")
	if a.Version != 2 || a.Content != "# Trip plan\n\n- Hà Nội\n- Huế\n- Hội An\n" {
		t.Fatalf("after the update: version %d, %q", a.Version, a.Content)
	}
	e.refused("update_artifact", map[string]any{"id": "art_1", "edits": []map[string]any{
		{"old_string": "Hà Nội", "new_string": "Hanoi"}, {"old_string": "Sài Gòn", "new_string": "x"}}}, "edit 2: old_string was not found")
	e.refused("update_artifact", map[string]any{"id": "art_1", "edits": []map[string]any{{"old_string": "- ", "new_string": "* "}}}, "occurs 3 times")
	e.ok("update_artifact", map[string]any{"id": "art_1", "edits": []map[string]any{{"old_string": "- ", "new_string": "* ", "replace_all": true}}})
	e.refused("rewrite_artifact", map[string]any{"id": "art_1", "content": e.artifact("art_1").Content}, "unchanged")
	e.ok("rewrite_artifact", map[string]any{"id": "art_1", "content": "# Done", "title": "Trip"})
	if a := e.artifact("art_1"); a.Version != 4 || a.Title != "Trip" {
		t.Errorf("after the rewrite: %+v, want version 4 titled Trip", a)
	}
	e.refused("save_artifact", map[string]any{"id": "art_1"}, "")
	e.refused("create_artifact", map[string]any{"title": "x", "kind": "pptx", "content": "x"}, "")
	e.ok("create_artifact", map[string]any{"title": "Script", "kind": "code", "language": "Python", "content": "print(1)"})
	if a := e.artifact("art_2"); a.Language != "python" {
		t.Errorf("language %q, want python", a.Language)
	}
}

// TestWithoutBrowser: with no browser the check tools and save_artifact
// are left out with the reason, and an HTML artifact saves as written,
// said to be unchecked.
func TestWithoutBrowser(t *testing.T) {
	cfg := artifacts.Config{Unavailable: "browser: headless Chromium is not available: none of [chromium] found",
		Workspace: workspace.Config{Root: t.TempDir()}}
	c := registry.New()
	c.Register(artifacts.Tools(cfg)...)
	f := turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: []string{"artifacts"}}}
	ts := c.Select(f)
	if d := slices.Compare(ts.Names(), []string{"create_artifact", "rewrite_artifact", "update_artifact"}); d != 0 {
		t.Errorf("declared %v, want the three writing tools", ts.Names())
	}
	for _, n := range []string{"save_artifact", "inspect_artifact", "measure_layout", "print_pdf"} {
		if r := ts.ReasonFor(n); !strings.Contains(r, "not available") {
			t.Errorf("%s left out for %q, want the browser's reason", n, r)
		}
	}
	e := newEnv(t, nil, store.ArtifactQuota{})
	res := e.ok("create_artifact", map[string]any{"title": "Page", "kind": "html", "content": "<p>hi</p>"})
	if a := e.artifact("art_1"); a.Version != 1 || a.Draft != nil || !strings.Contains(res.Content, "unchecked") {
		t.Errorf("an HTML artifact without a browser: %+v, %q", a, res.Content)
	}
}

// TestChecksComeOnlyWithTheArtifactTools: the family or create_artifact
// admits the checks and save_artifact; their own names admit nothing.
func TestChecksComeOnlyWithTheArtifactTools(t *testing.T) {
	c := registry.New()
	c.Register(artifacts.Tools(artifacts.Config{Checker: fakeChecker{}, Workspace: workspace.Config{Root: t.TempDir()}})...)
	sel := func(allow ...string) []string {
		f := turn.Facts{Model: turn.Model{Caps: turn.Capabilities{Tools: true}}, Agent: turn.Agent{Allow: allow}}
		return c.Select(f).Names()
	}
	if got := sel("artifacts"); len(got) != len(artifacts.Names) {
		t.Errorf("the family declares %v, want all of %v", got, artifacts.Names)
	}
	if got := sel("inspect_artifact", "measure_layout", "print_pdf", "save_artifact"); len(got) != 0 {
		t.Errorf("the check tools' own names declare %v, want nothing", got)
	}
	want := []string{"create_artifact", "save_artifact", "inspect_artifact", "measure_layout", "print_pdf"}
	if got := sel("create_artifact"); !slices.Equal(got, want) {
		t.Errorf("create_artifact declares %v, want %v", got, want)
	}
}

// fakeChecker stands in for a browser where only the selection is tested.
type fakeChecker struct{}

func (fakeChecker) Inspect(context.Context, browser.Document, []browser.Viewport) (browser.Report, error) {
	return browser.Report{}, nil
}
func (fakeChecker) Measure(context.Context, browser.Document, []browser.Viewport, []string) (browser.Report, error) {
	return browser.Report{}, nil
}
func (fakeChecker) PrintPDF(context.Context, browser.Document) ([]byte, error) { return nil, nil }

// TestScopeFromTheTurn: another conversation's or organisation's turn
// finds none of this conversation's artifacts, by any tool.
func TestScopeFromTheTurn(t *testing.T) {
	e := newEnv(t, nil, store.ArtifactQuota{})
	e.ok("create_artifact", map[string]any{"title": "Mine", "kind": "csv", "content": "a,b\n1,2\n"})
	for _, s := range []tool.Scope{{OrgID: "org1", UserID: "bob", ConversationID: "conv2", TurnID: "t9"},
		{OrgID: "org2", UserID: "alice", ConversationID: "conv1", TurnID: "t9"}} {
		for name, args := range map[string]map[string]any{
			"rewrite_artifact": {"id": "art_1", "content": "x"},
			"update_artifact":  {"id": "art_1", "edits": []map[string]any{{"old_string": "a", "new_string": "b"}}},
		} {
			_, err := e.call(s, name, args)
			if err == nil || !strings.Contains(err.Error(), `no artifact "art_1" in this conversation`) {
				t.Errorf("%s from %+v: %v, want not found", name, s, err)
			}
		}
	}
	if a := e.artifact("art_1"); a.Version != 1 {
		t.Errorf("the artifact changed: %+v", a)
	}
}

// TestBounds: each bound refuses where it enters: the schema's content,
// title and edits bounds, an update growing the content past
// store.MaxArtifactBytes, the conversation's count.
func TestBounds(t *testing.T) {
	e := newEnv(t, nil, store.ArtifactQuota{MaxCount: 2})
	big := strings.Repeat("x", store.MaxArtifactBytes+1)
	e.refused("create_artifact", map[string]any{"title": "Big", "kind": "markdown", "content": big}, "")
	e.refused("create_artifact", map[string]any{"title": strings.Repeat("t", store.MaxArtifactTitleBytes+1), "kind": "markdown", "content": "x"}, "")
	e.ok("create_artifact", map[string]any{"title": "Half", "kind": "markdown", "content": strings.Repeat("y", store.MaxArtifactBytes/2+1)})
	e.refused("update_artifact", map[string]any{"id": "art_1", "edits": []map[string]any{{"old_string": "y", "new_string": "yy", "replace_all": true}}}, "past")
	edits := make([]map[string]any, artifacts.MaxEdits+1)
	for i := range edits {
		edits[i] = map[string]any{"old_string": "y", "new_string": "z"}
	}
	e.refused("update_artifact", map[string]any{"id": "art_1", "edits": edits}, "")
	e.ok("create_artifact", map[string]any{"title": "Two", "kind": "markdown", "content": "2"})
	e.refused("create_artifact", map[string]any{"title": "Three", "kind": "markdown", "content": "3"}, "limit is 2")
	if list, _ := e.st.ListArtifacts(t.Context(), scope.OrgID, scope.ConversationID); len(list) != 2 {
		t.Errorf("%d artifacts after the refusals, want 2", len(list))
	}
}
