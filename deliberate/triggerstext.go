package deliberate

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTriggers writes a community's custom triggers for people ("quiver
// triggers list"): a table of families and phrases, or a line saying org
// has none.
func WriteTriggers(w io.Writer, org string, ts []Trigger) error {
	if len(ts) == 0 {
		fmt.Fprintf(w, "no custom triggers for %s\n", org)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tPHRASE")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\n", t.Target, t.Phrase)
	}
	return tw.Flush()
}
