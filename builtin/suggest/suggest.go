// Package suggest provides suggest_next_actions, the always-on tool that
// hands a short list of follow-ups to the surface.
package suggest

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/tool"
)

// Limits of one call.
const (
	MaxActions     = 4
	MaxActionChars = 80
)

//go:embed suggest_next_actions.md
var description string

// rules is suggest_next_actions' prompt fragment: most answers need none.
//
//go:embed rules.md
var rules string

// Input is the tool's arguments.
type Input struct {
	Actions []string `json:"actions" jsonschema:"short follow-ups phrased as the user would say them"`
}

// Output carries the suggestions to the surface.
type Output struct{ actions []string }

// ModelText is what the model reads back.
func (o Output) ModelText() string {
	return fmt.Sprintf("%d suggestions shown to the user.", len(o.actions))
}

// ToolEffect hands the suggestions to the surface.
func (o Output) ToolEffect() tool.Effect { return tool.Effect{NextActions: o.actions} }

// Tool returns the suggest_next_actions tool.
func Tool() *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "suggest_next_actions",
		Family:      "suggest",
		Macros:      []string{"next_actions_tool"},
		Description: description,
		AlwaysOn:    true,
		Fragments:   []string{strings.TrimSpace(rules)},
		Limits:      []tool.Limit{{Name: "actions", Value: MaxActions}, {Name: "action_chars", Value: MaxActionChars}},
		Tune: func(s *jsonschema.Schema) {
			lo, hi := 1, MaxActions
			s.Properties["actions"].MinItems, s.Properties["actions"].MaxItems = &lo, &hi
		},
	}, suggestActions)
}

func suggestActions(_ context.Context, _ tool.Scope, in Input) (Output, error) {
	var out []string
	for i, a := range in.Actions {
		a = strings.Join(strings.Fields(a), " ")
		switch {
		case a == "":
			return Output{}, fmt.Errorf("action %d is empty", i+1)
		case utf8.RuneCountInString(a) > MaxActionChars:
			return Output{}, fmt.Errorf("action %d is longer than %d characters", i+1, MaxActionChars)
		}
		out = append(out, a)
	}
	return Output{actions: out}, nil
}
