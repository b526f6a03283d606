package documents

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

//go:embed search_attachments.md
var searchDescription string

// Limits of search_attachments.
const (
	DefaultResults = 10
	MaxResults     = 20
	// MaxQueryRunes bounds the query (store.MaxMemoryQueryRunes).
	MaxQueryRunes = 1000
	// candidates is how many hits each ranking gives the fusion.
	candidates = 50
)

// SearchStore is what search_attachments reads.
type SearchStore interface {
	SearchAttachments(ctx context.Context, s store.AttachmentSearch) ([]store.AttachmentHit, error)
	AttachmentVectors(ctx context.Context, orgID, conversationID, model string) ([]retrieve.Candidate, error)
	AttachmentChunks(ctx context.Context, orgID, conversationID string, refs []string) ([]store.AttachmentHit, error)
}

// SearchInput is search_attachments' arguments.
type SearchInput struct {
	Query string `json:"query" jsonschema:"what to look for, in words"`
	Limit int    `json:"limit,omitempty" jsonschema:"passages to return, 1–20 (default 10)"`
}

// SearchTool returns search_attachments over st, embedding queries with
// the organisation's model from models. It is declared when the
// conversation has a file attached and an embedding model is configured
// (backend "embedding").
func SearchTool(st SearchStore, models embed.Source) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "search_attachments",
		Family:      "documents",
		Macros:      []string{"attachment_search_tool"},
		Description: strings.TrimSpace(searchDescription),
		Limits:      []tool.Limit{{Name: "results_default", Value: DefaultResults}, {Name: "results_max", Value: MaxResults}},
		Requires:    searchRequires,
		Tune: func(s *jsonschema.Schema) {
			lo, hi := 1.0, float64(MaxResults)
			s.Properties["limit"].Minimum, s.Properties["limit"].Maximum = &lo, &hi
		},
	}, func(ctx context.Context, s tool.Scope, in SearchInput) (string, error) {
		return search(ctx, st, models, s, in)
	})
}

// searchRequires names every condition that fails.
func searchRequires(s turn.Selection) string {
	var why []string
	if s.Attachments == 0 {
		why = append(why, "nothing attached to the conversation")
	}
	if !slices.Contains(s.Backends, "embedding") {
		why = append(why, "no embedding model configured")
	}
	return strings.Join(why, "; ")
}

func search(ctx context.Context, st SearchStore, models embed.Source, s tool.Scope, in SearchInput) (string, error) {
	q := strings.TrimSpace(in.Query)
	limit := in.Limit
	switch {
	case q == "":
		return "", errors.New("query is empty")
	case utf8.RuneCountInString(q) > MaxQueryRunes:
		return "", fmt.Errorf("query is %d characters; the limit is %d", utf8.RuneCountInString(q), MaxQueryRunes)
	case limit < 0 || limit > MaxResults:
		return "", fmt.Errorf("limit must be between 1 and %d, got %d", MaxResults, limit)
	case limit == 0:
		limit = DefaultResults
	}
	if st == nil || models == nil {
		return "", tool.Infra(fmt.Errorf("search_attachments: %w", store.ErrNoStore))
	}
	if s.ConversationID == "" {
		return "", errors.New("this turn has no conversation, so no attached files")
	}
	words, err := st.SearchAttachments(ctx, store.AttachmentSearch{OrgID: s.OrgID, ConversationID: s.ConversationID, Text: q, Limit: candidates})
	if err != nil {
		return "", tool.Infra(fmt.Errorf("search_attachments: %w", err))
	}
	near, err := nearest(ctx, st, models, s, q)
	if err != nil {
		return "", err
	}
	refs := make([]string, len(words))
	for i, h := range words {
		refs[i] = h.Ref
	}
	var top []string
	for _, h := range retrieve.Fuse(limit, refs, near) {
		top = append(top, h.ID)
	}
	hits, err := st.AttachmentChunks(ctx, s.OrgID, s.ConversationID, top)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("search_attachments: %w", err))
	}
	return render(q, hits), nil
}

// nearest ranks the conversation's chunks by their vectors' closeness
// to the query's, by the organisation's model.
func nearest(ctx context.Context, st SearchStore, models embed.Source, s tool.Scope, q string) ([]string, error) {
	e, err := models.Embedder(ctx, s.OrgID)
	if err != nil {
		return nil, tool.Infra(fmt.Errorf("search_attachments: embedding model: %w", err))
	}
	if e == nil {
		return nil, errors.New("no embedding model is configured for this organisation")
	}
	vs, err := e.Embed(ctx, []string{q}, embed.Query)
	if err != nil {
		return nil, tool.Infra(fmt.Errorf("search_attachments: embed the query: %w", err))
	}
	cands, err := st.AttachmentVectors(ctx, s.OrgID, s.ConversationID, e.Model().String())
	if err != nil {
		return nil, tool.Infra(fmt.Errorf("search_attachments: %w", err))
	}
	var out []string
	for _, h := range retrieve.Nearest(vs[0], cands, candidates) {
		out = append(out, h.ID)
	}
	return out, nil
}

func render(q string, hits []store.AttachmentHit) string {
	if len(hits) == 0 {
		return fmt.Sprintf("No passage of this conversation's files matches %q.", q)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d passage(s) from this conversation's files for %q, best first:", len(hits), q)
	for i, h := range hits {
		fmt.Fprintf(&b, "\n\n[%d] %q (id %s), passage %d:\n%s", i+1, h.Name, h.AttachmentID, h.Seq+1, h.Text)
	}
	return b.String()
}
