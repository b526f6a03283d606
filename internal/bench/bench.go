// Package bench is "quiver bench": it measures Quiver side by side with
// what it is compared against, in one run, so that the ratios hold on a
// noisy machine. Each comparison is named (Comparisons); servers run as
// processes of their own started from the quiver binary (quiver serve,
// "quiver bench fake-model", "quiver bench baseline", "quiver bench
// serve-probe", "quiver bench mcp-server"; ripgrep is run as rg), and their CPU is read from the kernel's accounting
// (internal/procstat), never inferred from wall time. docs/bench.md
// states the workload and the targets.
package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Comparisons are the comparisons' names, in the order they run.
var Comparisons = []string{"turns", "mcp", "assembly", "search", "memory"}

// Options configure a run. The zero value is the full run of every
// comparison with the quiver binary running it.
type Options struct {
	// Bin is the quiver binary the servers run; "" means this process's
	// executable (quiver bench itself).
	Bin string
	// Short is a correctness-sized run (seconds): every comparison, each
	// figure measured on little work.
	Short bool
	// Only names the comparisons to run; nil means all.
	Only []string
	// Rates are the fixed offered loads of "turns", per second; nil means
	// 50, 200, 500 (Short: 20).
	Rates []float64
	// Duration is how long each offered load lasts; 0 means 5s (Short:
	// 1s).
	Duration time.Duration
	// MaxRate caps the search for the highest sustained rate; 0 means
	// 2000 (Short: 40).
	MaxRate float64
	// DatabaseURL, when set, runs "turns" on PostgreSQL too.
	DatabaseURL string
	// Progress, when not nil, gets a line per step.
	Progress io.Writer
}

// Report is everything a run measured; a comparison that was not run
// is nil.
type Report struct {
	Machine  Machine         `json:"machine"`
	Short    bool            `json:"short"`
	Turns    []*TurnReport   `json:"turns,omitempty"`
	MCP      *MCPReport      `json:"mcp,omitempty"`
	Assembly *AssemblyReport `json:"assembly,omitempty"`
	Search   *SearchReport   `json:"search,omitempty"`
	Memory   *MemoryReport   `json:"memory,omitempty"`
}

// Machine is where the run happened.
type Machine struct {
	CPUs int `json:"cpus"`
	// LoadAvg and LoadAvgEnd are /proc/loadavg's 1, 5 and 15 minute
	// averages when the run started and when it ended.
	LoadAvg    string `json:"loadavg"`
	LoadAvgEnd string `json:"loadavg_end"`
	GoVersion  string `json:"go"`
	OS         string `json:"os"`
}

// CheckOnly returns an error naming a comparison that does not exist.
func CheckOnly(names []string) error {
	for _, n := range names {
		if !slices.Contains(Comparisons, n) {
			return fmt.Errorf("no comparison %q (comparisons: %s)", n, strings.Join(Comparisons, ", "))
		}
	}
	return nil
}

// runner is one run: its options with defaults, temporary folder and
// client.
type runner struct {
	o    Options
	bin  string
	tmp  string
	http *http.Client
}

// Run runs the comparisons o names and returns what they measured. A
// comparison that cannot run is an error; nothing it started outlives
// Run.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := CheckOnly(o.Only); err != nil {
		return nil, err
	}
	if o.runs("search") {
		// Found now, not after the comparisons before it ran.
		if _, err := exec.LookPath("rg"); err != nil {
			return nil, fmt.Errorf("bench search: ripgrep (rg) is not installed (--only leaves it out): %w", err)
		}
	}
	r := &runner{o: withDefaults(o), bin: o.Bin}
	if r.bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("bench: find the quiver binary: %w", err)
		}
		r.bin = exe
	}
	tmp, err := os.MkdirTemp("", "quiver-bench-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	r.tmp = tmp
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1024, 1024
	r.http = &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	rep := &Report{Machine: machine(), Short: o.Short}
	for _, name := range Comparisons {
		if !o.runs(name) {
			continue
		}
		if err := r.run(ctx, name, rep); err != nil {
			return rep, fmt.Errorf("bench %s: %w", name, err)
		}
	}
	rep.Machine.LoadAvgEnd = loadAvg()
	return rep, nil
}

// runs reports whether o runs the comparison name.
func (o Options) runs(name string) bool {
	return len(o.Only) == 0 || slices.Contains(o.Only, name)
}

// run runs one comparison into rep.
func (r *runner) run(ctx context.Context, name string, rep *Report) error {
	var err error
	switch name {
	case "turns":
		var t *TurnReport
		if t, err = r.runTurns(ctx, ""); err == nil {
			rep.Turns = append(rep.Turns, t)
			if r.o.DatabaseURL != "" {
				if t, err = r.runTurns(ctx, r.o.DatabaseURL); err == nil {
					rep.Turns = append(rep.Turns, t)
				}
			}
		}
	case "mcp":
		rep.MCP, err = r.runMCP(ctx)
	case "assembly":
		rep.Assembly, err = r.runAssembly()
	case "search":
		rep.Search, err = r.runSearch(ctx)
	case "memory":
		rep.Memory, err = r.runMemory(ctx)
	}
	return err
}

// withDefaults fills o's zero values.
func withDefaults(o Options) Options {
	if o.Rates == nil {
		o.Rates = []float64{50, 200, 500}
		if o.Short {
			o.Rates = []float64{20}
		}
	}
	if o.Duration == 0 {
		o.Duration = 5 * time.Second
		if o.Short {
			o.Duration = time.Second
		}
	}
	if o.MaxRate == 0 {
		o.MaxRate = 2000
		if o.Short {
			o.MaxRate = 40
		}
	}
	return o
}

// logf writes a progress line.
func (r *runner) logf(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, "quiver bench: "+format+"\n", args...)
	}
}

// get is the body of a GET that must answer 200.
func (r *runner) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	return body, err
}

// machine describes this machine.
func machine() Machine {
	return Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, LoadAvg: loadAvg()}
}

// loadAvg is /proc/loadavg's three averages ("" where there is none).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
