package artifacts

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/quiverhq/quiver/browser"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// inspectIn is inspect_artifact's arguments.
type inspectIn struct {
	ID        string             `json:"id" jsonschema:"the artifact's ID (art_…)"`
	Viewports []browser.Viewport `json:"viewports,omitempty" jsonschema:"page sizes to render, up to 10; default 1280x800"`
}

// document returns a visual artifact's document to check: its draft,
// else its newest version, with which it is (for the inspection mark).
func (t *tools) document(ctx context.Context, s tool.Scope, op, id string) (store.Artifact, browser.Document, error) {
	a, err := t.get(ctx, s, id)
	if err != nil {
		return store.Artifact{}, browser.Document{}, err
	}
	if !store.Visual(a.Kind) {
		return store.Artifact{}, browser.Document{}, fmt.Errorf("%s: %s is a %s artifact; only HTML and SVG ones render", op, id, a.Kind)
	}
	if t.cfg.Checker == nil {
		return store.Artifact{}, browser.Document{}, tool.Infra(fmt.Errorf("%s: no browser is configured", op))
	}
	kind := browser.HTML
	if a.Kind == store.ArtifactSVG {
		kind = browser.SVG
	}
	return a, browser.Document{Kind: kind, Content: current(a)}, nil
}

// what names the content checked, for the model.
func what(a store.Artifact) string {
	if a.Draft != nil {
		return fmt.Sprintf("draft %d", a.Draft.Rev)
	}
	return fmt.Sprintf("version %d", a.Version)
}

// checkErr is a check's failure: the model's message for what the
// document or arguments caused, an infrastructure error for the rest.
func checkErr(op string, err error) error {
	if errors.Is(err, browser.ErrUnavailable) || errors.Is(err, context.Canceled) {
		return tool.Infra(fmt.Errorf("%s: %w", op, err))
	}
	// The browser's errors are about the document (too large, a page
	// past its time, a bad viewport or selector): the model can act on
	// them.
	return fmt.Errorf("%s: %v", op, err)
}

// inspection is inspect_artifact's result: text for every model, the
// screenshots for one that sees.
type inspection struct {
	text   string
	images []tool.Image
}

func (o inspection) ModelText() string        { return o.text }
func (o inspection) ToolImages() []tool.Image { return o.images }

func (t *tools) inspect(ctx context.Context, s tool.Scope, in inspectIn) (inspection, error) {
	a, doc, err := t.document(ctx, s, "inspect_artifact", in.ID)
	if err != nil {
		return inspection{}, err
	}
	rep, err := t.cfg.Checker.Inspect(ctx, doc, in.Viewports)
	if err != nil {
		return inspection{}, checkErr("inspect_artifact", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Inspected %s of artifact %s %q (%s), every network request blocked.\n", what(a), a.ID, a.Title, a.Kind)
	var out inspection
	problems := 0
	for i, p := range rep.Pages {
		problems += writePage(&b, i, p)
		if len(p.Screenshot) > 0 {
			out.images = append(out.images, tool.Image{MIME: "image/png", Data: p.Screenshot})
		}
	}
	if a.Draft != nil {
		r, err := t.repo()
		if err != nil {
			return inspection{}, err
		}
		err = r.MarkArtifactInspected(ctx, s.OrgID, s.ConversationID, a.ID, a.Draft.Rev)
		switch {
		case errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrArtifactNoDraft):
			b.WriteString("\nThe draft changed while it was being inspected; inspect it again before saving.")
		case err != nil:
			return inspection{}, tool.Infra(err)
		case problems > 0:
			fmt.Fprintf(&b, "\n%d problem(s) above: fix them with update_artifact and inspect again, or save_artifact if they are intended.", problems)
		default:
			b.WriteString("\nNo console errors or blocked loads. If the screenshot or description looks right, call save_artifact.")
		}
	}
	out.text = b.String()
	return out, nil
}

// writePage writes one page's findings and returns how many problems
// (console errors, blocked loads, cut-off or overflowing content) it
// shows.
func writePage(b *strings.Builder, i int, p browser.Page) int {
	fmt.Fprintf(b, "\nPage %d at %d×%d (document %d×%d):\n", i+1, p.Viewport.Width, p.Viewport.Height, p.ScrollWidth, p.ScrollHeight)
	problems := 0
	for _, m := range p.Console {
		fmt.Fprintf(b, "- console %s: %s\n", m.Level, m.Text)
		if m.Level == "error" || m.Level == "exception" {
			problems++
		}
	}
	if p.ConsoleOmitted > 0 {
		fmt.Fprintf(b, "- %d more console messages\n", p.ConsoleOmitted)
	}
	for _, u := range p.Blocked {
		fmt.Fprintf(b, "- blocked load: %s (put it inline: a data: URL, an inline <style> or <script>)\n", u)
		problems++
	}
	if p.BlockedOmitted > 0 {
		fmt.Fprintf(b, "- %d more blocked loads\n", p.BlockedOmitted)
		problems += p.BlockedOmitted
	}
	if p.ScrollWidth > p.Viewport.Width {
		fmt.Fprintf(b, "- the document is %d px wide, wider than the viewport: it scrolls sideways\n", p.ScrollWidth)
		problems++
	}
	if d := strings.TrimSpace(p.Description); d != "" {
		b.WriteString("Layout: " + d + "\n")
	}
	return problems
}

// measureIn is measure_layout's arguments.
type measureIn struct {
	ID        string             `json:"id" jsonschema:"the artifact's ID (art_…)"`
	Viewports []browser.Viewport `json:"viewports,omitempty" jsonschema:"page sizes to render, up to 10; default 1280x800"`
	Selectors []string           `json:"selectors,omitempty" jsonschema:"CSS selectors of the elements to measure, up to 20; omit to list what overflows or is cut off"`
}

func (t *tools) measure(ctx context.Context, s tool.Scope, in measureIn) (string, error) {
	a, doc, err := t.document(ctx, s, "measure_layout", in.ID)
	if err != nil {
		return "", err
	}
	rep, err := t.cfg.Checker.Measure(ctx, doc, in.Viewports, in.Selectors)
	if err != nil {
		return "", checkErr("measure_layout", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s of artifact %s %q.\n", what(a), a.ID, a.Title)
	for i, p := range rep.Pages {
		fmt.Fprintf(&b, "\nPage %d at %d×%d (document %d×%d):\n", i+1, p.Viewport.Width, p.Viewport.Height, p.ScrollWidth, p.ScrollHeight)
		if len(p.Boxes) == 0 {
			if len(in.Selectors) > 0 {
				b.WriteString("- no element matched\n")
			} else {
				b.WriteString("- nothing overflows or is cut off\n")
			}
		}
		for _, x := range p.Boxes {
			fmt.Fprintf(&b, "- %s: x %.0f, y %.0f, %.0f×%.0f", x.Selector, x.X, x.Y, x.Width, x.Height)
			if x.Overflows {
				b.WriteString(", overflows")
			}
			if x.Clipped {
				b.WriteString(", text cut off")
			}
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// printIn is print_pdf's arguments.
type printIn struct {
	ID   string `json:"id" jsonschema:"the artifact's ID (art_…)"`
	Path string `json:"path" jsonschema:"where to write the PDF in the workspace, ending in .pdf"`
}

func (t *tools) printPDF(ctx context.Context, s tool.Scope, in printIn) (string, error) {
	if !strings.EqualFold(path.Ext(in.Path), ".pdf") {
		return "", fmt.Errorf("print_pdf: path %q must end in .pdf", in.Path)
	}
	if err := workspace.CheckPath(in.Path); err != nil {
		return "", fmt.Errorf("print_pdf: %w", err)
	}
	a, doc, err := t.document(ctx, s, "print_pdf", in.ID)
	if err != nil {
		return "", err
	}
	pdf, err := t.cfg.Checker.PrintPDF(ctx, doc)
	if err != nil {
		return "", checkErr("print_pdf", err)
	}
	ws, err := workspace.Open(ctx, t.cfg.Workspace, s)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	if err := ws.WriteFile(in.Path, pdf); err != nil {
		return "", fmt.Errorf("print_pdf: %w", err)
	}
	return fmt.Sprintf("Printed %s of artifact %s %q to %s (%d bytes).", what(a), a.ID, a.Title, in.Path, len(pdf)), nil
}
