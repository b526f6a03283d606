package mcpclient

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteViews writes an organisation's registrations for people ("quiver
// mcp list"): a table of each one's name, type, state, token, URL and
// tools, or a line saying org has none.
func WriteViews(w io.Writer, org string, views []View) error {
	if len(views) == 0 {
		fmt.Fprintf(w, "no MCP servers registered for %s\n", org)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tENABLED\tTOKEN\tURL\tTOOLS")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%s\n", v.Name, v.Type, v.Enabled, v.Token, v.URL, DescribeNames(v.Name, v.Tools))
	}
	return tw.Flush()
}
