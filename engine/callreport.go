package engine

import (
	"fmt"
	"io"

	"github.com/quiverhq/quiver/tool"
)

// CallReport is one tool call's result as "quiver call --json" prints it.
type CallReport struct {
	IsError bool        `json:"is_error"`
	Content string      `json:"content"`
	Ref     string      `json:"ref"`
	Effect  tool.Effect `json:"effect"`
}

// NewCallReport is the report of res.
func NewCallReport(res tool.Result) CallReport {
	return CallReport{IsError: res.IsError, Content: res.Content, Ref: res.Ref, Effect: res.Effect}
}

// WriteText writes the result for people, as "quiver call" prints it: the
// content, then a pause's question and each suggested next action.
func (c CallReport) WriteText(w io.Writer) {
	fmt.Fprintln(w, c.Content)
	if c.Effect.Pause != nil {
		fmt.Fprintf(w, "\n[pause] %s\n", c.Effect.Pause.Question)
	}
	for _, a := range c.Effect.NextActions {
		fmt.Fprintf(w, "[suggest] %s\n", a)
	}
	if c.Effect.Checklist != nil {
		for _, it := range c.Effect.Checklist.Items {
			fmt.Fprintf(w, "[checklist] %s %s\n", it.Mark(), it.Text)
		}
	}
}
