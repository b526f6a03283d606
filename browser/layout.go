package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

//go:embed js/layout.js
var layoutJS string

// maxBlocks bounds the main blocks a Description lists.
const maxBlocks = 25

// maxProblemLines bounds the overflowing elements a Description lists.
const maxProblemLines = 15

// layoutResult is what js/layout.js returns.
type layoutResult struct {
	Error        string   `json:"error"`
	ScrollWidth  int      `json:"scrollWidth"`
	ScrollHeight int      `json:"scrollHeight"`
	Title        string   `json:"title"`
	Boxes        []jsBox  `json:"boxes"`
	Blocks       []block  `json:"blocks"`
	Unmatched    []string `json:"unmatched"`
	BrokenImages int      `json:"brokenImages"`
	More         int      `json:"more"`
	viewport     Viewport
	measured     bool // selectors were given
}

type jsBox struct {
	Box
	Note string `json:"note"`
}

type block struct {
	Selector string `json:"selector"`
	X        int    `json:"x"`
	Y        int    `json:"y"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Depth    int    `json:"depth"`
	Text     string `json:"text"`
}

// layout runs js/layout.js in the page; a selector the browser rejects
// is an error naming it.
func (t *tab) layout(ctx context.Context, selectors []string) (*layoutResult, error) {
	opts, err := json.Marshal(map[string]any{"selectors": selectors, "maxBoxes": MaxBoxes, "maxBlocks": maxBlocks})
	if err != nil {
		return nil, err
	}
	expr := "(() => {\n" + layoutJS + "\nreturn layout(" + string(opts) + ");\n})()"
	res, err := chromedp.Run(ctx, chromedp.Evaluate[layoutResult](expr))
	if err != nil {
		return nil, fmt.Errorf("measure the layout: %w", err)
	}
	if res.Error != "" {
		return nil, fmt.Errorf("measure: %s", res.Error)
	}
	res.measured = selectors != nil
	return &res, nil
}

// fill copies the layout into p: its size, and the boxes when measuring
// (withBoxes), and writes the Description.
func (l *layoutResult) fill(p *Page, withBoxes bool) {
	l.viewport = p.Viewport
	p.ScrollWidth, p.ScrollHeight = l.ScrollWidth, l.ScrollHeight
	if withBoxes {
		p.Boxes = make([]Box, len(l.Boxes))
		for i, b := range l.Boxes {
			p.Boxes[i] = b.Box
		}
	}
	p.Description = truncate(l.describe(), MaxDescriptionBytes)
}

// describe is the Description: size, scrolling, main blocks, problems.
func (l *layoutResult) describe() string {
	var b strings.Builder
	v := l.viewport
	fmt.Fprintf(&b, "Document %d×%d CSS px in a %d×%d viewport", l.ScrollWidth, l.ScrollHeight, v.Width, v.Height)
	switch {
	case l.ScrollWidth > v.Width && l.ScrollHeight > v.Height:
		b.WriteString(" (scrolls both ways; the screenshot shows the top-left viewport only)")
	case l.ScrollWidth > v.Width:
		fmt.Fprintf(&b, " (scrolls sideways: %d px wider than the viewport)", l.ScrollWidth-v.Width)
	case l.ScrollHeight > v.Height:
		fmt.Fprintf(&b, " (scrolls down; content below %d px is not in the screenshot)", v.Height)
	}
	b.WriteString(".\n")
	if l.Title != "" {
		fmt.Fprintf(&b, "Title: %q.\n", truncate(l.Title, 200))
	}
	if l.measured {
		l.describeMeasured(&b)
		return b.String()
	}
	if len(l.Blocks) > 0 {
		b.WriteString("Main blocks (x,y width×height):\n")
		for _, bl := range l.Blocks {
			fmt.Fprintf(&b, "%s- %s (%d,%d %d×%d)", strings.Repeat("  ", max(bl.Depth-1, 0)), truncate(bl.Selector, 120), bl.X, bl.Y, bl.Width, bl.Height)
			if bl.Text != "" {
				fmt.Fprintf(&b, ": %q", bl.Text)
			}
			b.WriteString("\n")
		}
	} else {
		b.WriteString("No visible block covers 2% of the viewport (the page may look empty).\n")
	}
	l.describeProblems(&b)
	return b.String()
}

func (l *layoutResult) describeProblems(b *strings.Builder) {
	if l.BrokenImages > 0 {
		fmt.Fprintf(b, "%d image(s) did not load (only inline data: images load).\n", l.BrokenImages)
	}
	if len(l.Boxes) == 0 {
		b.WriteString("Nothing overflows or is cut off.\n")
		return
	}
	fmt.Fprintf(b, "Overflowing or cut off (%d):\n", len(l.Boxes)+l.More)
	for i, bx := range l.Boxes {
		if i == maxProblemLines {
			fmt.Fprintf(b, "- … and %d more (measure_layout lists them all)\n", len(l.Boxes)+l.More-i)
			break
		}
		fmt.Fprintf(b, "- %s (%.0f,%.0f %.0f×%.0f): %s\n", truncate(bx.Selector, 120), bx.X, bx.Y, bx.Width, bx.Height, bx.Note)
	}
}

func (l *layoutResult) describeMeasured(b *strings.Builder) {
	fmt.Fprintf(b, "%d element(s) measured", len(l.Boxes))
	if l.More > 0 {
		fmt.Fprintf(b, " (%d more matched, past the %d reported)", l.More, MaxBoxes)
	}
	b.WriteString(".\n")
	for _, s := range l.Unmatched {
		fmt.Fprintf(b, "Selector %q matched nothing.\n", truncate(s, 120))
	}
	for _, bx := range l.Boxes {
		if bx.Note != "" {
			fmt.Fprintf(b, "- %s: %s\n", truncate(bx.Selector, 120), bx.Note)
		}
	}
}
