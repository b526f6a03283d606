package browser_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/browser"
)

// The tests drive the real Debian chromium. Without one they skip, unless
// QUIVER_REQUIRE_PEERS=1, where a missing browser fails them.

var (
	sharedOnce sync.Once
	shared     *browser.Chromium
	sharedErr  error
)

// checker returns the package's one Chromium, started on first use and
// left for the process's exit (TestMain closes it).
func checker(tb testing.TB) *browser.Chromium {
	tb.Helper()
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shared, sharedErr = browser.NewChromium(ctx, browser.Options{PageTimeout: 20 * time.Second})
	})
	if sharedErr != nil {
		skipOrFail(tb, sharedErr)
	}
	return shared
}

func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, browser.ErrUnavailable) && os.Getenv("QUIVER_REQUIRE_PEERS") != "1" {
		tb.Skipf("no browser: %v (install the Debian package chromium)", err)
	}
	tb.Fatalf("chromium: %v", err)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

func inspect(t *testing.T, c browser.Checker, html string, vs ...browser.Viewport) browser.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := c.Inspect(ctx, browser.Document{Kind: browser.HTML, Content: html}, vs)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if len(rep.Pages) != max(len(vs), 1) {
		t.Fatalf("%d pages, want %d", len(rep.Pages), max(len(vs), 1))
	}
	return rep.Pages[0]
}

func TestInspectReportsConsoleScreenshotAndDescription(t *testing.T) {
	c := checker(t)
	p := inspect(t, c, `<!doctype html><title>Report</title>
<style>body{margin:0} header{height:100px;background:#036} .cut{width:100px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}</style>
<header id="top">Quarterly report</header>
<div class="cut">This sentence is far too long for a hundred pixels</div>
<img src="data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==" width="10" height="10">
<script>console.error("broken chart"); console.log("hello", 42); undefinedFunction();</script>`)
	if !strings.HasPrefix(string(p.Screenshot), "\x89PNG") {
		t.Errorf("screenshot is not a PNG (%d bytes)", len(p.Screenshot))
	}
	want := []browser.Message{{Level: "error", Text: "broken chart"}, {Level: "log", Text: "hello 42"}}
	if len(p.Console) != 3 || p.Console[0] != want[0] || p.Console[1] != want[1] || p.Console[2].Level != "exception" ||
		!strings.Contains(p.Console[2].Text, "undefinedFunction") {
		t.Errorf("console = %+v, want %+v then an exception naming undefinedFunction", p.Console, want)
	}
	if len(p.Blocked) != 0 {
		t.Errorf("blocked = %v, want none (a data: image is inline)", p.Blocked)
	}
	for _, s := range []string{"Document 1280×", "1280×800 viewport", `Title: "Report"`, "#top (0,0 1280×100)", `"Quarterly report"`, "div.cut", "text cut off"} {
		if !strings.Contains(p.Description, s) {
			t.Errorf("description lacks %q:\n%s", s, p.Description)
		}
	}
}

func TestPrintPDFHoldsTheText(t *testing.T) {
	c := checker(t)
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
			t.Fatal("pdftotext not found (Debian poppler-utils) and QUIVER_REQUIRE_PEERS=1")
		}
		t.Skip("pdftotext not found (Debian poppler-utils)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pdf, err := c.PrintPDF(ctx, browser.Document{Kind: browser.HTML, Content: `<h1>Invoice 4711</h1><p>Total due: 99 EUR</p>`})
	if err != nil {
		t.Fatalf("print: %v", err)
	}
	if !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatalf("not a PDF: %.20q", pdf)
	}
	cmd := exec.Command("pdftotext", "-", "-")
	cmd.Stdin = strings.NewReader(string(pdf))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, s := range []string{"Invoice 4711", "Total due: 99 EUR"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("PDF text lacks %q:\n%s", s, out)
		}
	}
}
