package browser_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/browser"
)

func TestChecksRefuseBadInputBeforeRendering(t *testing.T) {
	c := checker(t)
	ok := browser.Document{Kind: browser.HTML, Content: "<p>x</p>"}
	eleven := make([]browser.Viewport, browser.MaxPages+1)
	for i := range eleven {
		eleven[i] = browser.DefaultViewport
	}
	cases := []struct {
		name      string
		doc       browser.Document
		viewports []browser.Viewport
		selectors []string
		want      string
	}{
		{"too many pages", ok, eleven, nil, "at most 10 pages"},
		{"document too large", browser.Document{Kind: browser.HTML, Content: strings.Repeat("a", browser.MaxDocumentBytes+1)}, nil, nil, "more than the 2097152"},
		{"viewport too narrow", ok, []browser.Viewport{{Width: browser.MinViewport - 1, Height: 500}}, nil, "must be 100 to 4096"},
		{"viewport too tall", ok, []browser.Viewport{{Width: 500, Height: browser.MaxViewport + 1}}, nil, "must be 100 to 4096"},
		{"unknown kind", browser.Document{Kind: "pdf", Content: "x"}, nil, nil, `kind "pdf"`},
		{"empty", browser.Document{Kind: browser.SVG, Content: " "}, nil, nil, "empty"},
		{"too many selectors", ok, nil, make([]string, browser.MaxSelectors+1), "at most 20"},
		{"selector too long", ok, nil, []string{strings.Repeat("a", browser.MaxSelectorBytes+1)}, "more than 500"},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.selectors != nil {
				_, err = c.Measure(ctx, tc.doc, tc.viewports, tc.selectors)
			} else {
				_, err = c.Inspect(ctx, tc.doc, tc.viewports)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if tc.selectors == nil && !strings.Contains(tc.name, "selector") {
				if _, err := c.Measure(ctx, tc.doc, tc.viewports, nil); err == nil {
					t.Error("Measure accepted what Inspect refused")
				}
			}
		})
	}
	if _, err := c.PrintPDF(ctx, browser.Document{Kind: browser.HTML, Content: strings.Repeat("a", browser.MaxDocumentBytes+1)}); err == nil {
		t.Error("PrintPDF accepted a document over MaxDocumentBytes")
	}
}

func TestTenPagesRender(t *testing.T) {
	c := checker(t)
	vs := make([]browser.Viewport, browser.MaxPages)
	for i := range vs {
		vs[i] = browser.Viewport{Width: 300 + 100*i, Height: 400}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := c.Measure(ctx, browser.Document{Kind: browser.HTML, Content: `<div id="w" style="width:50%">x</div>`}, vs, []string{"#w"})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Pages {
		if p.Viewport != vs[i] || len(p.Boxes) != 1 || int(p.Boxes[0].Width) != (vs[i].Width-16)/2 {
			t.Errorf("page %d: viewport %v boxes %+v, want #w half of %d less the body's margin", i, p.Viewport, p.Boxes, vs[i].Width)
		}
	}
}

func TestConsoleAndBlockedListsAreCapped(t *testing.T) {
	c := checker(t)
	p := inspect(t, c, `<script>
for (let i = 0; i < 5000; i++) console.log("message " + i);
console.error("x".repeat(5000));
for (let i = 0; i < 300; i++) { const im = new Image(); im.src = "http://blocked.invalid/" + i; }
</script>`)
	if len(p.Console) != browser.MaxMessages || p.Console[0].Text != "message 0" {
		t.Errorf("%d console messages, first %+v; want %d, from message 0", len(p.Console), p.Console[:min(1, len(p.Console))], browser.MaxMessages)
	}
	if p.ConsoleOmitted < 1000 {
		t.Errorf("console omitted = %d, want the rest of 5001 counted", p.ConsoleOmitted)
	}
	if len(p.Blocked) != browser.MaxBlocked || p.BlockedOmitted != 300-browser.MaxBlocked {
		t.Errorf("%d blocked, %d omitted; want %d and %d", len(p.Blocked), p.BlockedOmitted, browser.MaxBlocked, 300-browser.MaxBlocked)
	}
	long := inspect(t, c, `<script>console.error("x".repeat(5000))</script>`)
	if len(long.Console) != 1 || len(long.Console[0].Text) > browser.MaxMessageBytes {
		t.Errorf("a 5000-byte message kept as %d bytes, want at most %d", len(long.Console[0].Text), browser.MaxMessageBytes)
	}
}

func TestMeasure(t *testing.T) {
	c := checker(t)
	doc := browser.Document{Kind: browser.HTML, Content: `<!doctype html><style>body{margin:0}</style>
<div id="box" style="width:200px;height:50px">a box</div>
<p class="cut" style="width:80px;white-space:nowrap;overflow:hidden">much too long to fit in eighty pixels</p>
<table id="wide" style="width:2000px"><tr><td>wide</td></tr></table>`}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := c.Measure(ctx, doc, []browser.Viewport{{Width: 800, Height: 600}}, []string{"#box", ".missing"})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Pages[0]
	if len(p.Boxes) != 1 || p.Boxes[0] != (browser.Box{Selector: "#box", Width: 200, Height: 50}) {
		t.Errorf("boxes = %+v, want #box at 0,0 200×50", p.Boxes)
	}
	if !strings.Contains(p.Description, `".missing" matched nothing`) || p.ScrollWidth != 2000 {
		t.Errorf("scroll width %d, description:\n%s", p.ScrollWidth, p.Description)
	}
	rep, err = c.Measure(ctx, doc, []browser.Viewport{{Width: 800, Height: 600}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cut, wide bool
	for _, b := range rep.Pages[0].Boxes {
		cut = cut || b.Selector == "p.cut" && b.Clipped
		wide = wide || b.Selector == "#wide" && b.Overflows && !b.Clipped
	}
	if !cut || !wide {
		t.Errorf("overflow boxes = %+v, want p.cut clipped and #wide past the viewport", rep.Pages[0].Boxes)
	}
	if _, err := c.Measure(ctx, doc, nil, []string{"div[["}); err == nil || !strings.Contains(err.Error(), "not valid CSS") {
		t.Errorf("bad selector: err = %v", err)
	}
}

func TestPDFIsCapped(t *testing.T) {
	checker(t) // skips without a browser
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := browser.NewChromium(ctx, browser.Options{MaxPDFBytes: 20000, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	doc := browser.Document{Kind: browser.HTML, Content: strings.Repeat("<p>A line of a long document that prints on many pages.</p>", 2000)}
	if _, err := c.PrintPDF(ctx, doc); err == nil || !strings.Contains(err.Error(), "more than the 20000 allowed") {
		t.Errorf("err = %v, want the PDF refused as too large", err)
	}
	if pdf, err := c.PrintPDF(ctx, browser.Document{Kind: browser.HTML, Content: "<p>short</p>"}); err != nil || len(pdf) > 20000 {
		t.Errorf("a short PDF: %d bytes, err %v", len(pdf), err)
	}
}

func TestMeasureBoxesAreCapped(t *testing.T) {
	c := checker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := c.Measure(ctx, browser.Document{Kind: browser.HTML, Content: strings.Repeat("<div>x</div>", 300)}, nil, []string{"div"})
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Pages[0]; len(p.Boxes) != browser.MaxBoxes || !strings.Contains(p.Description, "100 more matched") {
		t.Errorf("%d boxes, description %q; want %d and the rest counted", len(p.Boxes), p.Description, browser.MaxBoxes)
	}
}

func TestSVGRenders(t *testing.T) {
	c := checker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := c.Inspect(ctx, browser.Document{Kind: browser.SVG, Content: `<?xml version="1.0"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" width="300" height="2000"><rect width="300" height="2000" fill="teal"/><image href="http://127.0.0.1:9/x.png" width="5" height="5"/></svg>`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Pages[0]
	if p.ScrollHeight != 2000 || len(p.Screenshot) == 0 || len(p.Blocked) != 1 || p.Blocked[0] != "http://127.0.0.1:9/x.png" {
		t.Errorf("scroll height %d, %d-byte screenshot, blocked %v", p.ScrollHeight, len(p.Screenshot), p.Blocked)
	}
}

// BenchmarkInspect is one Inspect of a small report page at the default
// viewport: the time per page inspect_artifact spends.
func BenchmarkInspect(b *testing.B) {
	c := checker(b)
	doc := browser.Document{Kind: browser.HTML, Content: `<!doctype html><title>r</title><h1>Report</h1>` + strings.Repeat(`<section><h2>Part</h2><p>Some text of the report.</p></section>`, 30)}
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Inspect(ctx, doc, nil); err != nil {
			b.Fatal(err)
		}
	}
}
