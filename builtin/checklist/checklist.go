// Package checklist provides update_tasks, the agent's own checklist for
// the running turn: the steps of a longer piece of work and which one it
// is on, shown live by the surface (a checklist above the answer in the
// web UI, checklist events in --json). The product documents name the
// tool update_tasks; in code and docs the concept is a checklist, never
// to be confused with scheduled tasks.
//
// The checklist lives in the turn only. Each call replaces it whole, so
// the last call is the state. It has no repository of its own: what is
// kept is the call's record in the transcript and, like every event of
// the turn, its checklist event in the turn's event log (for a stream
// resumed within the retention window). No route outside the turn
// writes it.
package checklist

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/tool"
)

// Family is update_tasks' tool family.
const Family = "checklist"

// Limits of one checklist.
const (
	// MaxItems is how many steps a checklist may hold.
	MaxItems = 20
	// MaxItemChars bounds one step's text, in characters.
	MaxItemChars = 200
)

//go:embed update_tasks.md
var description string

// Item is one step as the model sends it.
type Item struct {
	Text   string `json:"text" jsonschema:"the step, as the user reads it"`
	Status string `json:"status" jsonschema:"pending, in_progress (one at most) or completed"`
}

// Input is the tool's arguments: the whole checklist, in order.
type Input struct {
	Tasks []Item `json:"tasks" jsonschema:"every step, in order; replaces the previous list"`
}

// Output is the checklist as it now stands.
type Output struct{ list tool.Checklist }

// ModelText is the checklist as the model reads it back: a line per
// step with its mark ([x] done, [>] in progress, [ ] pending).
func (o Output) ModelText() string {
	if len(o.list.Items) == 0 {
		return "Checklist cleared."
	}
	done := 0
	var b strings.Builder
	for _, it := range o.list.Items {
		if it.Status == tool.ChecklistDone {
			done++
		}
		fmt.Fprintf(&b, "\n%s %s", it.Mark(), it.Text)
	}
	return fmt.Sprintf("Checklist shown to the user (%d of %d done):", done, len(o.list.Items)) + b.String()
}

// ToolEffect hands the checklist to the surface.
func (o Output) ToolEffect() tool.Effect {
	list := o.list
	return tool.Effect{Checklist: &list}
}

// Tool returns the update_tasks tool.
func Tool() *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "update_tasks",
		Family:      Family,
		Macros:      []string{"checklist_tool"},
		Description: strings.TrimSpace(description),
		Limits:      []tool.Limit{{Name: "items", Value: MaxItems}, {Name: "item_chars", Value: MaxItemChars}, {Name: "in_progress", Value: 1}},
		Tune: func(s *jsonschema.Schema) {
			hi := MaxItems
			s.Properties["tasks"].MaxItems = &hi
			s.Properties["tasks"].Items.Properties["status"].Enum = []any{tool.ChecklistPending, tool.ChecklistInProgress, tool.ChecklistDone}
		},
	}, update)
}

// update checks the checklist and returns it, whitespace normalised.
func update(_ context.Context, _ tool.Scope, in Input) (Output, error) {
	if len(in.Tasks) > MaxItems {
		return Output{}, fmt.Errorf("%d steps: a checklist holds at most %d", len(in.Tasks), MaxItems)
	}
	items := make([]tool.ChecklistItem, 0, len(in.Tasks))
	running := -1 // the step in progress, if any
	for i, it := range in.Tasks {
		text := strings.Join(strings.Fields(strings.Map(dropControl, it.Text)), " ")
		switch {
		case text == "":
			return Output{}, fmt.Errorf("step %d is empty", i+1)
		case utf8.RuneCountInString(text) > MaxItemChars:
			return Output{}, fmt.Errorf("step %d is longer than %d characters", i+1, MaxItemChars)
		}
		switch it.Status {
		case tool.ChecklistInProgress:
			if running >= 0 {
				return Output{}, fmt.Errorf("steps %d and %d are both in_progress: at most one step is in progress at a time", running+1, i+1)
			}
			running = i
		case tool.ChecklistPending, tool.ChecklistDone:
		default:
			return Output{}, fmt.Errorf("step %d: status %q is not pending, in_progress or completed", i+1, it.Status)
		}
		items = append(items, tool.ChecklistItem{Text: text, Status: it.Status})
	}
	return Output{list: tool.Checklist{Items: items}}, nil
}

// dropControl maps control characters (an escape sequence that would
// drive a terminal, a NUL) to spaces, which Fields then collapses.
func dropControl(r rune) rune {
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}
