package mcpclient

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for people, as "quiver mcp probe" prints
// it: the server, a line per tool and a block per call.
func (r ProbeReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "server: %s %s (%s)\n", r.Server.Name, r.Server.Version, r.Transport)
	fmt.Fprintf(w, "tools: %d\n", len(r.Tools))
	for _, t := range r.Tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(w, "  %s  %s\n", t.Name, desc)
	}
	for _, c := range r.Calls {
		status := "ok"
		if c.IsError {
			status = "error"
		}
		fmt.Fprintf(w, "call %s %s: %s\n%s\n", c.Tool, c.Arguments, status, c.Content)
	}
}
