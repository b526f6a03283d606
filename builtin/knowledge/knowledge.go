// Package knowledge provides search_knowledge: hybrid search of the
// documents attached to the turn's agent, declared when the agent has
// knowledge and an embedding model is configured.
package knowledge

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Limits of one call.
const (
	DefaultLimit  = 10
	MaxLimit      = 20
	MaxQueryRunes = 500
)

//go:embed search_knowledge.md
var description string

// Searcher searches an agent's knowledge (knowledge.Index).
type Searcher interface {
	Search(ctx context.Context, orgID, agent, query string, limit int) ([]store.KnowledgeHit, error)
}

// Input is the tool's arguments.
type Input struct {
	Query string `json:"query" jsonschema:"what to look for, in words"`
	Limit int    `json:"limit,omitempty" jsonschema:"passages to return, 1–20 (default 10)"`
}

// Tool returns search_knowledge over s. The organisation and agent come
// from the turn's scope alone. A nil s keeps the declaration; its calls
// fail with an infrastructure error wrapping store.ErrNoStore.
func Tool(s Searcher) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "search_knowledge",
		Family:      "knowledge",
		Macros:      []string{"knowledge_tool"},
		Description: strings.TrimSpace(description),
		Access:      tool.Read,
		Requires:    Requires,
		Limits: []tool.Limit{
			{Name: "limit_default", Value: DefaultLimit}, {Name: "limit_max", Value: MaxLimit},
			{Name: "query_chars", Value: MaxQueryRunes},
		},
		Tune: func(sc *jsonschema.Schema) {
			lo, hi := 1.0, float64(MaxLimit)
			sc.Properties["limit"].Minimum, sc.Properties["limit"].Maximum = &lo, &hi
			n := MaxQueryRunes
			sc.Properties["query"].MaxLength = &n
		},
	}, func(ctx context.Context, sc tool.Scope, in Input) (string, error) {
		return search(ctx, s, sc, in)
	})
}

// Requires is search_knowledge's condition: the agent has knowledge and
// the "embedding" backend is configured; the reason names what failed.
func Requires(s turn.Selection) string {
	var missing []string
	if !s.Knowledge {
		missing = append(missing, "the agent has no knowledge")
	}
	if !s.HasBackend("embedding") {
		missing = append(missing, "no embedding model is configured")
	}
	return strings.Join(missing, "; ")
}

func search(ctx context.Context, s Searcher, sc tool.Scope, in Input) (string, error) {
	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return "", errors.New("query is empty")
	case len([]rune(q)) > MaxQueryRunes:
		return "", fmt.Errorf("query is over %d characters", MaxQueryRunes)
	case in.Limit < 0 || in.Limit > MaxLimit:
		return "", fmt.Errorf("limit must be between 1 and %d, got %d", MaxLimit, in.Limit)
	}
	if s == nil {
		return "", tool.Infra(fmt.Errorf("search_knowledge: %w", store.ErrNoStore))
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	hits, err := s.Search(ctx, sc.OrgID, sc.Agent, q, limit)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("search_knowledge: %w", err))
	}
	if len(hits) == 0 {
		return "No passage of this agent's documents matches.", nil
	}
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%d] %s (passage %d)\n%s", i+1, h.Name, h.Seq+1, h.Text)
	}
	return b.String(), nil
}
