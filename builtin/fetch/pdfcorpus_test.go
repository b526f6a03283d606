package fetch

import (
	"context"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/quiverhq/quiver/internal/browsertest"
)

// The PDF corpus: documents whose text is known, printed to PDF by
// headless Chromium with the Noto fonts (Debian fonts-noto-core and
// fonts-noto-cjk), as a person saves a web page. The PDFs are committed
// under testdata/pdf/corpus, so the agreement test runs without a browser
// and on the same bytes everywhere (another Chromium or font version
// prints other bytes); -regenerate prints them again:
//
//	go test ./builtin/fetch -run TestPDFCorpusAgreement -regenerate
var regenerate = flag.Bool("regenerate", false, "print the PDF corpus under testdata/pdf/corpus again with Chromium")

// corpusDoc is one document of the corpus: its source text is what a
// reader should give back.
type corpusDoc struct {
	name string
	// lang is the document's language (the html lang attribute, which
	// picks the CJK font's variant).
	lang string
	// layout is "flow" (a heading and paragraphs), "columns" (the same in
	// two CSS columns) or "table" (the first paragraph is the header row,
	// each other one a row, its cells separated by " | ").
	layout string
	paras  []string
}

// source is the text the document shows, in reading order.
func (d corpusDoc) source() string {
	if d.layout != "table" {
		return strings.Join(d.paras, "\n")
	}
	var rows []string
	for _, p := range d.paras {
		rows = append(rows, strings.Join(strings.Split(p, " | "), " "))
	}
	return strings.Join(rows, "\n")
}

// html is the page Chromium prints.
func (d corpusDoc) html() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang=%q><head><meta charset="utf-8"><title>%s</title><style>
body { font-family: "Noto Sans", %q, sans-serif; font-size: 13pt; line-height: 1.5; }
.columns { column-count: 2; column-gap: 2em; }
table { border-collapse: collapse; } td, th { border: 1px solid #888; padding: 4px 8px; text-align: left; }
</style></head><body>`, d.lang, html.EscapeString(d.name), cjkFont(d.lang))
	esc := html.EscapeString
	switch d.layout {
	case "table":
		b.WriteString("<table>")
		for i, p := range d.paras {
			tag := "td"
			if i == 0 {
				tag = "th"
			}
			b.WriteString("<tr>")
			for _, c := range strings.Split(p, " | ") {
				fmt.Fprintf(&b, "<%s>%s</%s>", tag, esc(c), tag)
			}
			b.WriteString("</tr>")
		}
		b.WriteString("</table>")
	default:
		fmt.Fprintf(&b, "<h1>%s</h1>", esc(d.paras[0]))
		if d.layout == "columns" {
			b.WriteString(`<div class="columns">`)
		}
		for _, p := range d.paras[1:] {
			fmt.Fprintf(&b, "<p>%s</p>", esc(p))
		}
		if d.layout == "columns" {
			b.WriteString("</div>")
		}
	}
	b.WriteString("</body></html>")
	return b.String()
}

// cjkFont is the Noto CJK family for lang: the Japanese or the Simplified
// Chinese shapes of the shared ideographs.
func cjkFont(lang string) string {
	if lang == "zh" {
		return "Noto Sans CJK SC"
	}
	return "Noto Sans CJK JP"
}

// corpusDir is where the corpus's PDFs and source texts live.
const corpusDir = "testdata/pdf/corpus"

// loadCorpus returns the corpus's documents with their PDFs, printing them
// first under -regenerate.
func loadCorpus(t testing.TB) map[string][]byte {
	t.Helper()
	if *regenerate {
		printCorpus(t.(*testing.T))
	}
	out := map[string][]byte{}
	for _, d := range pdfCorpus {
		b, err := os.ReadFile(filepath.Join(corpusDir, d.name+".pdf"))
		if err != nil {
			t.Fatalf("corpus (print it with -regenerate): %v", err)
		}
		out[d.name] = b
	}
	return out
}

// printCorpus prints every corpus document with headless Chromium and
// writes its PDF and source text under corpusDir.
func printCorpus(t *testing.T) {
	exe := browsertest.Path(t)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-dev-shm-usage", true))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelTime()
	if err := os.MkdirAll(corpusDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range pdfCorpus {
		pdf, err := printPDF(ctx, d.html())
		if err != nil {
			t.Fatalf("print %s: %v", d.name, err)
		}
		if err := os.WriteFile(filepath.Join(corpusDir, d.name+".pdf"), pdf, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(corpusDir, d.name+".txt"), []byte(d.source()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// printPDF prints the page markup on A4 paper, without header or footer.
func printPDF(ctx context.Context, markup string) ([]byte, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		return nil, err
	}
	tree, err := chromedp.Call(ctx, cdppage.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	if _, err := chromedp.Call(ctx, cdppage.SetDocumentContent, cdppage.SetDocumentContentParams{FrameID: tree.FrameTree.Frame.ID, HTML: markup}); err != nil {
		return nil, err
	}
	out, err := chromedp.Call(ctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{PaperWidth: 8.27, PaperHeight: 11.69})
	return out.Data, err
}
