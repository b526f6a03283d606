package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
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
	if m := rep.MCP; m != nil {
		writeMCP(tw, m)
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
	if s := rep.Search; s != nil {
		writeSearch(tw, s)
	}
	if mem := rep.Memory; mem != nil {
		fmt.Fprintf(tw, "\nmemory (%d conversations, one turn each, %d at once)\n", mem.Conversations, mem.Burst)
		fmt.Fprintf(tw, "heap live before\t%d B\tafter\t%d B\tper idle conversation\t%.0f B\n", mem.Before.HeapLive, mem.After.HeapLive, mem.PerConversation)
		fmt.Fprintf(tw, "goroutines before\t%d\tafter\t%d\tleft\t%d\n", mem.Before.Goroutines, mem.After.Goroutines, mem.GoroutinesLeft)
		for _, k := range slices.Sorted(maps.Keys(mem.Left)) {
			fmt.Fprintf(tw, "  left: %d × %s\n", mem.Left[k], k)
		}
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

func writeMCP(tw *tabwriter.Writer, m *MCPReport) {
	fmt.Fprintf(tw, "\nmcp (one echo call at a time over Streamable HTTP to a go-sdk server in its own process)\n")
	fmt.Fprintf(tw, "client\tcalls\tp50 µs\tp99 µs\tclient cpu µs/call\tserver cpu µs/call\n")
	for _, s := range []struct {
		name string
		st   MCPStats
	}{{"go-sdk", m.SDK}, {"quiver", m.Quiver}} {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\n", s.name, s.st.Calls, s.st.P50, s.st.P99, s.st.ClientCPU, s.st.ServerCPU)
	}
	fmt.Fprintf(tw, "quiver / go-sdk: p50 %.2f×, p99 %.2f×, client cpu %.2f×\n", m.P50Ratio, m.P99Ratio, m.CPURatio)
}

func writeSearch(tw *tabwriter.Writer, s *SearchReport) {
	fmt.Fprintf(tw, "\nsearch (search_files against %s, %d files, %d bytes)\n", s.Ripgrep, s.Files, s.Bytes)
	fmt.Fprintf(tw, "case\tmatches\tsearches\tquiver p50 ms\tmean\tcpu ms\trg p50 ms\tmean\tcpu ms\tratio p50\tratio cpu\n")
	for _, c := range s.Cases {
		q, g := c.Quiver, c.Ripgrep
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f×\t%.2f×\n",
			c.Name, c.Matches, c.Searches, q.P50, q.Mean, q.CPU, g.P50, g.Mean, g.CPU, c.Ratio, c.CPURatio)
	}
}
