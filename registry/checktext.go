package registry

import (
	"cmp"
	"fmt"
	"io"
)

// AgentCheck is an agent file's allowlist checked, as "quiver agent check
// --json" prints it.
type AgentCheck struct {
	File  string `json:"file"`
	Agent string `json:"agent"`
	// Warnings are the allowlist's warnings in allowlist order; empty,
	// never null, when it is clean.
	Warnings []Warning `json:"warnings"`
	// MCPChecked says whether server/tool and server/* entries were
	// checked against the organisation's registrations.
	MCPChecked bool `json:"mcp_checked"`
	// Note says why MCP entries were not checked, when there are some.
	Note string `json:"note,omitempty"`
	// Entries is how many entries the allowlist has, which the text form
	// gives when it is clean.
	Entries int `json:"-"`
}

// WriteText writes the check for people: one line per warning, or one
// saying the allowlist is clean, then the note; each begins with File.
func (c AgentCheck) WriteText(w io.Writer) {
	for _, wn := range c.Warnings {
		fmt.Fprintf(w, "%s: %s\n", c.File, wn.Line())
	}
	if len(c.Warnings) == 0 {
		noun := "entries"
		if c.Entries == 1 {
			noun = "entry"
		}
		fmt.Fprintf(w, "%s: agent %s: allowlist clean (%d %s)\n", c.File, c.Agent, c.Entries, noun)
	}
	if c.Note != "" {
		fmt.Fprintf(w, "%s: note: %s\n", c.File, c.Note)
	}
}

// Line is the warning as the CLI prints it: the part of the agent it is
// about ("tools" for the allowlist), then String.
func (w Warning) Line() string { return cmp.Or(w.Field, "tools") + ": " + w.String() }
