package documents

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

//go:embed read_document.md
var readDescription string

// ReadInput is read_document's arguments.
type ReadInput struct {
	Document string `json:"document" jsonschema:"the file's name or id"`
	Page     int    `json:"page,omitempty" jsonschema:"page to read, from 1 (default 1)"`
}

// MaxRefBytes bounds the document argument.
const MaxRefBytes = 300

// ReadTool returns read_document over srcs (attachments first). It is
// declared when the conversation has a file attached or the agent has
// knowledge.
func ReadTool(srcs Sources) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "read_document",
		Family:      "documents",
		Macros:      []string{"document_tool"},
		Description: strings.TrimSpace(readDescription),
		// A page is bounded by PageRunes; stored again it would come back
		// as a reference instead of the text.
		Unstored: true,
		Limits:   []tool.Limit{{Name: "chars_per_page", Value: document.PageRunes}},
		Requires: func(s turn.Selection) string {
			if s.Attachments == 0 && !s.Knowledge {
				return "nothing attached to the conversation and no knowledge on the agent"
			}
			return ""
		},
		Tune: func(s *jsonschema.Schema) {
			one := 1.0
			s.Properties["page"].Minimum = &one
		},
	}, func(ctx context.Context, s tool.Scope, in ReadInput) (string, error) {
		return read(ctx, srcs, s, in)
	})
}

func read(ctx context.Context, srcs Sources, s tool.Scope, in ReadInput) (string, error) {
	ref := strings.TrimSpace(in.Document)
	switch {
	case ref == "":
		return "", errors.New("document is empty: give a file's name or id")
	case len(ref) > MaxRefBytes:
		return "", fmt.Errorf("document is %d bytes; a name or id is at most %d", len(ref), MaxRefBytes)
	case in.Page < 0:
		return "", fmt.Errorf("page must be 1 or more, got %d", in.Page)
	}
	page := max(in.Page, 1)
	d, err := srcs.Find(ctx, s, ref)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound(ctx, srcs, s, ref)
	}
	if err != nil {
		return "", tool.Infra(fmt.Errorf("read_document: %w", err))
	}
	if d.Unreadable != "" {
		return "", errors.New(d.Unreadable)
	}
	p, ok := document.PageOf(d.Text, page)
	if !ok {
		return "", fmt.Errorf("%q has %d page(s) of up to %d characters; page %d is past the end", d.Name, p.Pages, document.PageRunes, page)
	}
	head := fmt.Sprintf("%s %q (%s, id %s), page %d of %d:", d.Origin, d.Name, d.Kind, d.ID, p.Number, p.Pages)
	if d.Text == "" {
		return head + "\n(the file holds no text)", nil
	}
	tail := ""
	if p.Number < p.Pages {
		tail = fmt.Sprintf("\n[More: call again with page=%d.]", p.Number+1)
	}
	return head + "\n" + p.Text + tail, nil
}

// notFound says ref names no document, listing what there is.
func notFound(ctx context.Context, srcs Sources, s tool.Scope, ref string) error {
	list, err := srcs.Listing(ctx, s)
	if err != nil || list == "" {
		return fmt.Errorf("no document %q here", ref)
	}
	return fmt.Errorf("no document %q here; %s", ref, list)
}
