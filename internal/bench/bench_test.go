package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/quiverhq/quiver/internal/bench"
	"github.com/quiverhq/quiver/internal/replicatest"
)

// TestShortRun is "quiver bench --short" as scripts/test runs it: a
// correctness check, never a timed assertion. Every comparison runs on
// the quiver binary built from this tree, and every figure it reports is
// present and positive (the ones that may be zero: errors, heap growth,
// the MCP server's CPU, read in 10 ms steps), and the burst left no
// goroutine behind. The search comparison also checks that search_files
// and ripgrep found the same lines.
func TestShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts quiver serve processes")
	}
	rep, err := bench.Run(context.Background(), bench.Options{Bin: replicatest.Binary(t), Short: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Turns) != 1 {
		t.Fatalf("%d turn reports, want SQLite's", len(rep.Turns))
	}
	tr := rep.Turns[0]
	if tr.Workload.RequestBytes <= 0 || tr.Workload.Tools <= 0 || tr.Workload.SystemChars <= 0 {
		t.Errorf("workload %+v: want a request, a system prompt and tools", tr.Workload)
	}
	for _, lv := range tr.Levels {
		for name, st := range map[string]bench.LoadStats{"quiver": lv.Quiver, "baseline": lv.Baseline} {
			if st.Errors != 0 || st.Turns <= 0 || st.P50 <= 0 || st.P99 < st.P50 || st.Achieved <= 0 {
				t.Errorf("%s at %.0f/s: %+v", name, st.Offered, st)
			}
		}
	}
	if tr.CPU.Quiver <= 0 || tr.CPU.Baseline <= 0 || tr.CPU.Ratio <= 0 {
		t.Errorf("cpu per turn %+v: want both servers' and their ratio", tr.CPU)
	}
	// The sustained search ran; a first step past its latency bound (a
	// machine loaded by the rest of the suite) is a timing, which this
	// test never asserts, but a turn that failed is an error.
	switch {
	case len(tr.Steps) == 0:
		t.Errorf("sustained rate %.0f over no steps", tr.MaxSustained)
	case tr.MaxSustained <= 0 && tr.Steps[0].Errors > 0:
		t.Errorf("sustained search: the first step failed turns: %+v", tr.Steps[0])
	case tr.MaxSustained <= 0:
		t.Logf("sustained search: the first step's p99 was past the bound on this machine: %+v", tr.Steps[0])
	}
	mc := rep.MCP
	if mc == nil {
		t.Fatal("no mcp report")
	}
	for name, st := range map[string]bench.MCPStats{"go-sdk": mc.SDK, "quiver": mc.Quiver} {
		if st.Calls <= 0 || st.P50 <= 0 || st.P99 < st.P50 || st.ClientCPU <= 0 || st.ServerCPU < 0 {
			t.Errorf("mcp %s: %+v", name, st)
		}
	}
	if mc.P50Ratio <= 0 || mc.P99Ratio <= 0 || mc.CPURatio <= 0 {
		t.Errorf("mcp ratios %+v", mc)
	}
	sr := rep.Search
	if sr == nil || sr.Files <= 0 || sr.Bytes <= 0 || sr.Ripgrep == "" || len(sr.Cases) != 2 {
		t.Fatalf("search %+v", sr)
	}
	for _, c := range sr.Cases {
		for name, st := range map[string]bench.SearchStats{"quiver": c.Quiver, "ripgrep": c.Ripgrep} {
			if st.P50 <= 0 || st.Mean <= 0 || st.CPU <= 0 {
				t.Errorf("search %s, %s: %+v", c.Name, name, st)
			}
		}
		if c.Matches <= 0 || c.Searches <= 0 || c.Ratio <= 0 || c.CPURatio <= 0 {
			t.Errorf("search %s: %+v", c.Name, c)
		}
	}
	a := rep.Assembly
	if a == nil || len(a.Sizes) != 3 || a.DetectUS <= 0 {
		t.Fatalf("assembly %+v", a)
	}
	for _, s := range a.Sizes {
		if s.Tools <= 0 || s.Declared <= 0 || s.CachedUS <= 0 || s.UncachedUS <= 0 {
			t.Errorf("assembly at %d tools: %+v", s.Tools, s)
		}
		// Allocations, not time: the cached turn must reuse the work.
		if s.Allocs >= s.UncachedAllocs {
			t.Errorf("assembly at %d tools: %.0f allocations cached, %.0f uncached; the cache saves nothing", s.Tools, s.Allocs, s.UncachedAllocs)
		}
	}
	m := rep.Memory
	if m == nil || m.Conversations <= 0 || m.Before.HeapLive == 0 || m.After.HeapLive == 0 || m.Before.Goroutines <= 0 {
		t.Errorf("memory %+v", m)
	} else if m.GoroutinesLeft != 0 || m.Left != nil {
		// Counts, not times: with the idle connections on both sides
		// closed, a goroutine still there is one a turn left.
		t.Errorf("%d goroutines left after the burst: %v", m.GoroutinesLeft, m.Left)
	}
	var text, js bytes.Buffer
	if err := bench.WriteText(&text, rep); err != nil || !bytes.Contains(text.Bytes(), []byte("cpu per turn")) ||
		!bytes.Contains(text.Bytes(), []byte("quiver / go-sdk")) || !bytes.Contains(text.Bytes(), []byte("search_files against")) {
		t.Errorf("text report (%v):\n%s", err, text.String())
	}
	if err := bench.WriteJSON(&js, rep); err != nil || !json.Valid(js.Bytes()) {
		t.Errorf("JSON report (%v):\n%s", err, js.String())
	}
}

// TestOnlyRefusesUnknown: a comparison name that does not exist is an
// error naming it, before anything starts.
func TestOnlyRefusesUnknown(t *testing.T) {
	if _, err := bench.Run(context.Background(), bench.Options{Only: []string{"turns", "nope"}}); err == nil {
		t.Fatal("--only=nope: no error")
	}
	if err := bench.CheckOnly(bench.Comparisons); err != nil {
		t.Fatal(err)
	}
}
