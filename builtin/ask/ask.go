// Package ask provides ask_clarifying_question, the always-on tool that
// pauses a turn to put one question to the user.
package ask

import (
	"context"
	_ "embed"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Limits of one call.
const (
	MaxSuggested     = 1
	MaxQuestionChars = 500
)

//go:embed ask_clarifying_question.md
var description string

// Input is the tool's arguments.
type Input struct {
	Question  string   `json:"question" jsonschema:"the one question to ask"`
	Suggested []string `json:"suggested_answers,omitempty" jsonschema:"at most one likely answer the user can pick"`
}

// Output carries the pause to the loop.
type Output struct{ pause tool.Pause }

// ModelText is what the model reads back.
func (Output) ModelText() string {
	return "Question sent. The turn pauses here; the user's answer arrives as their next message."
}

// ToolEffect asks the loop to pause the turn.
func (o Output) ToolEffect() tool.Effect { return tool.Effect{Pause: &o.pause} }

// Tool returns the ask_clarifying_question tool.
func Tool() *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "ask_clarifying_question",
		Family:      "ask",
		Macros:      []string{"clarifying_question_tool"},
		Description: description,
		AlwaysOn:    true,
		Limits:      []tool.Limit{{Name: "suggested_answers", Value: MaxSuggested}, {Name: "question_chars", Value: MaxQuestionChars}},
		Tune: func(s *jsonschema.Schema) {
			n := MaxSuggested
			s.Properties["suggested_answers"].MaxItems = &n
		},
	}, ask)
}

func ask(_ context.Context, _ tool.Scope, in Input) (Output, error) {
	q := strings.TrimSpace(store.PlainText(in.Question))
	switch {
	case q == "":
		return Output{}, errors.New("question is empty")
	case utf8.RuneCountInString(q) > MaxQuestionChars:
		return Output{}, errors.New("question is longer than 500 characters; ask one short question")
	}
	p := tool.Pause{Question: q}
	if len(in.Suggested) == 1 {
		p.Suggested = strings.TrimSpace(store.PlainText(in.Suggested[0]))
	}
	return Output{pause: p}, nil
}
