// Package calc provides the always-on calculate tool: an exact arithmetic
// evaluator the model calls instead of doing mental math.
package calc

import (
	"context"
	_ "embed"
	"strings"

	"github.com/quiverhq/quiver/tool"
)

//go:embed calculate.md
var description string

// rules is calculate's prompt fragment: when to call it.
//
//go:embed rules.md
var rules string

// input is the calculate tool's arguments.
type input struct {
	Expression string `json:"expression" jsonschema:"arithmetic expression, e.g. (1200*1.05^3 - 50)/12"`
}

// Tool returns the calculate tool: it evaluates the expression argument with
// Eval and answers with the number as Format prints it ("0.3"). Evaluation
// errors go to the model as the tool's error. Each call builds a new,
// immutable *tool.Tool.
func Tool() *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "calculate",
		Family:      "calc",
		Macros:      []string{"calculator_tool"},
		Description: strings.TrimSpace(description),
		Access:      tool.Read,
		AlwaysOn:    true,
		Fragments:   []string{strings.TrimSpace(rules)},
		Limits: []tool.Limit{
			{Name: "expression_chars", Value: MaxLength},
			{Name: "paren_depth", Value: MaxDepth},
		},
	}, calculate)
}

func calculate(_ context.Context, _ tool.Scope, in input) (string, error) {
	v, err := Eval(in.Expression)
	if err != nil {
		return "", err
	}
	return Format(v), nil
}
