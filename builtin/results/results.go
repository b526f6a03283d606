// Package results provides read_tool_result, the always-on tool that pages
// through tool results dispatch stored because they were too long to inline.
package results

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Limits of one call.
const (
	MaxRefs         = 3
	DefaultMaxChars = 4000
	MinMaxChars     = 1024
	MaxMaxChars     = 20000
)

//go:embed read_tool_result.md
var description string

// rules is read_tool_result's prompt fragment: when not to read on.
//
//go:embed rules.md
var rules string

// Input is the tool's arguments.
type Input struct {
	Refs     []string `json:"refs" jsonschema:"result references (res_…), at most 3"`
	MaxChars *int     `json:"maxChars,omitempty" jsonschema:"characters per reference, 1024–20000 (default 4000)"`
	Offset   int      `json:"offset,omitempty" jsonschema:"character offset to start from (default 0)"`
}

// Tool returns read_tool_result reading from rs. Only results stored in the
// calling turn's organisation and conversation can be read. A nil rs gives
// the same tool and declaration, whose calls with valid arguments fail with
// an infrastructure error wrapping store.ErrNoStore: for commands that
// declare tools but open no store.
func Tool(rs store.Results) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "read_tool_result",
		Family:      "results",
		Macros:      []string{"tool_result_tool"},
		Description: description,
		AlwaysOn:    true,
		Fragments:   []string{strings.TrimSpace(rules)},
		// Its output is bounded by maxChars; storing it again would answer
		// a read with a new reference instead of the text.
		Unstored: true,
		Limits: []tool.Limit{
			{Name: "refs", Value: MaxRefs}, {Name: "maxChars_default", Value: DefaultMaxChars},
			{Name: "maxChars_min", Value: MinMaxChars}, {Name: "maxChars_max", Value: MaxMaxChars},
		},
		Tune: func(s *jsonschema.Schema) {
			lo, hi := 1, MaxRefs
			s.Properties["refs"].MinItems, s.Properties["refs"].MaxItems = &lo, &hi
		},
	}, func(ctx context.Context, s tool.Scope, in Input) (string, error) {
		return read(ctx, rs, s, in)
	})
}

func read(ctx context.Context, rs store.Results, s tool.Scope, in Input) (string, error) {
	// Absent means the default; an explicit 0 is out of range like any other.
	maxChars := DefaultMaxChars
	if in.MaxChars != nil {
		maxChars = *in.MaxChars
	}
	if maxChars < MinMaxChars || maxChars > MaxMaxChars {
		return "", fmt.Errorf("maxChars must be between %d and %d, got %d", MinMaxChars, MaxMaxChars, maxChars)
	}
	if in.Offset < 0 {
		return "", fmt.Errorf("offset must be 0 or more, got %d", in.Offset)
	}
	if rs == nil {
		return "", tool.Infra(fmt.Errorf("read_tool_result: %w", store.ErrNoStore))
	}
	var parts []string
	found := 0
	for _, ref := range in.Refs {
		r, err := rs.GetResult(ctx, s.OrgID, s.ConversationID, ref)
		switch {
		case errors.Is(err, store.ErrNotFound):
			parts = append(parts, fmt.Sprintf("%s: no such result in this conversation.", ref))
			continue
		case errors.Is(err, store.ErrEvicted):
			parts = append(parts, fmt.Sprintf("%s: evicted: stored results passed their quota and the oldest were removed; run the tool again if you still need it.", ref))
			continue
		case err != nil:
			return "", tool.Infra(fmt.Errorf("read_tool_result: %w", err))
		}
		found++
		parts = append(parts, page(ref, r.Body, in.Offset, maxChars))
	}
	if found == 0 {
		return "", errors.New(strings.Join(parts, "\n"))
	}
	return strings.Join(parts, "\n\n"), nil
}

// page renders body[offset:offset+max] (in characters) with a header saying
// where it is and how to read on.
func page(ref, body string, offset, max int) string {
	runes := []rune(body)
	total := len(runes)
	if offset >= total {
		return fmt.Sprintf("%s: offset %d is past the end (%d characters).", ref, offset, total)
	}
	end := min(offset+max, total)
	head := fmt.Sprintf("%s, characters %d–%d of %d:", ref, offset, end, total)
	tail := ""
	if end < total {
		tail = fmt.Sprintf("\n[More: call again with offset=%d.]", end)
	}
	return head + "\n" + string(runes[offset:end]) + tail
}
