package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteJSON writes rep as indented JSON.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes rep as tables, one section per comparison, each with
// the figures and their ratio to what Quiver is compared against.
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	m := rep.Machine
	fmt.Fprintf(tw, "machine: %d CPUs, load %s at the start, %s at the end, %s %s\n", m.CPUs, m.LoadAvg, m.LoadAvgEnd, m.GoVersion, m.OS)
	for _, t := range rep.Turns {
		writeTurns(tw, t)
	}
	if a := rep.Assembly; a != nil {
		fmt.Fprintf(tw, "\nassembly (collect + select + gate + assemble, through the engine)\n")
		fmt.Fprintf(tw, "tools\tdeclared\tcached µs (cpu)\tuncached µs (cpu)\tcached allocs\tuncached allocs\n")
		for _, s := range a.Sizes {
			fmt.Fprintf(tw, "%d\t%d\t%.1f (%.1f)\t%.1f (%.1f)\t%.0f\t%.0f\n", s.Tools, s.Declared,
				s.CachedUS, s.CachedCPUUS, s.UncachedUS, s.UncachedCPUUS, s.Allocs, s.UncachedAllocs)
		}
		fmt.Fprintf(tw, "deliberate tool mode detection alone: %.1f µs (cpu %.1f)\n", a.DetectUS, a.DetectCPUUS)
	}
	if mem := rep.Memory; mem != nil {
		fmt.Fprintf(tw, "\nmemory (%d conversations, one turn each, %d at once)\n", mem.Conversations, mem.Burst)
		fmt.Fprintf(tw, "heap live before\t%d B\tafter\t%d B\tper idle conversation\t%.0f B\n", mem.Before.HeapLive, mem.After.HeapLive, mem.PerConversation)
		fmt.Fprintf(tw, "goroutines before\t%d\tafter\t%d\tleft\t%d\n", mem.Before.Goroutines, mem.After.Goroutines, mem.GoroutinesLeft)
	}
	return tw.Flush()
}

func writeTurns(tw *tabwriter.Writer, t *TurnReport) {
	wl := t.Workload
	fmt.Fprintf(tw, "\nturns on %s\n", t.Store)
	fmt.Fprintf(tw, "workload: first request %d B, system prompt %d chars, %d tools declared, replies of %d and %d chunks\n",
		wl.RequestBytes, wl.SystemChars, wl.Tools, wl.ToolChunks, wl.TextChunks)
	fmt.Fprintf(tw, "offered/s\tserver\tturns\terrors\tdone/s\tp50 ms\tp99 ms\tcpu ms/turn\n")
	for _, lv := range t.Levels {
		for _, s := range []struct {
			name string
			st   LoadStats
		}{{"quiver", lv.Quiver}, {"baseline", lv.Baseline}} {
			fmt.Fprintf(tw, "%.0f\t%s\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.2f\n", s.st.Offered, s.name, s.st.Turns, s.st.Errors, s.st.Achieved, s.st.P50, s.st.P99, s.st.CPUPerTurn)
		}
		fmt.Fprintf(tw, "%.0f\tadded\t\t\t\t%.1f\t%.1f\t\n", lv.Quiver.Offered, lv.AddedP50, lv.AddedP99)
		if lv.Quiver.FirstError != "" {
			fmt.Fprintf(tw, "  first quiver error: %s\n", lv.Quiver.FirstError)
		}
		if lv.Baseline.FirstError != "" {
			fmt.Fprintf(tw, "  first baseline error: %s\n", lv.Baseline.FirstError)
		}
	}
	c := t.CPU
	fmt.Fprintf(tw, "cpu per turn at %.0f/s: quiver %.2f ms, baseline %.2f ms, ratio %.1f×\n", c.Offered, c.Quiver, c.Baseline, c.Ratio)
	fmt.Fprintf(tw, "highest sustained rate (no error, p99 < 1 s): %.0f/s; steps:", t.MaxSustained)
	for _, s := range t.Steps {
		fmt.Fprintf(tw, " %.0f/s (%d errors, p99 %.0f ms)", s.Offered, s.Errors, s.P99)
	}
	fmt.Fprintln(tw)
}
