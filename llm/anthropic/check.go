package anthropic

import (
	"fmt"

	"github.com/quiverhq/quiver/llm"
)

// maxToolName is the longest tool name the Messages API takes.
const maxToolName = 64

// CheckTool reports a declaration the Messages API would refuse, as an
// *llm.Error of kind ErrUnsupportedTool: a name outside
// ^[a-zA-Z0-9_-]{1,64}$, or parameters that are not an object schema (a
// JSON object whose type, when given, is "object"). Empty parameters mean
// a tool without arguments. Any keyword of an object schema is accepted:
// Anthropic takes JSON Schema as it is. With Config.Tools, each
// definition is checked once.
func (m *Model) CheckTool(d llm.ToolDef) error { return m.tools.Check(d, checkTool) }

// checkTool is CheckTool's check.
func checkTool(d llm.ToolDef) error {
	if !validToolName(d.Name) {
		return &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("anthropic: tool name %q: want 1 to %d letters, digits, '_' or '-'", d.Name, maxToolName)}
	}
	if _, err := inputSchema(d.Parameters); err != nil {
		return &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("anthropic: tool %q: %v", d.Name, err)}
	}
	return nil
}

func validToolName(name string) bool {
	if len(name) == 0 || len(name) > maxToolName {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}
