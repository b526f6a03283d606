package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/internal/procstat"
	"github.com/quiverhq/quiver/internal/texttree"
	"github.com/quiverhq/quiver/tool"
)

// SearchReport is comparison 4: search_files against ripgrep on the same
// generated tree (internal/texttree), with the same query semantics.
type SearchReport struct {
	// Files and Bytes are the tree's size.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Ripgrep is `rg --version`'s first line.
	Ripgrep string       `json:"ripgrep"`
	Cases   []SearchCase `json:"cases"`
}

// SearchCase is one query, run alternately by both.
type SearchCase struct {
	Name            string   `json:"name"`
	Queries         []string `json:"queries"`
	CaseInsensitive bool     `json:"case_insensitive"`
	Context         int      `json:"context"`
	// Matches is how many matching lines both found (they must agree).
	Matches int `json:"matching_lines"`
	// Searches is how many times each ran, after one warm-up.
	Searches int         `json:"searches"`
	Quiver   SearchStats `json:"quiver"`
	Ripgrep  SearchStats `json:"ripgrep"`
	// Ratio is Quiver's p50 over ripgrep's; CPURatio the same of CPU.
	Ratio    float64 `json:"ratio"`
	CPURatio float64 `json:"cpu_ratio"`
}

// SearchStats are one side's searches.
type SearchStats struct {
	// P50 and Mean are the time of one search, in ms: search_files' call
	// in this process, ripgrep's process from its start to its exit.
	P50  float64 `json:"p50_ms"`
	Mean float64 `json:"mean_ms"`
	// CPU is the CPU time per search, in ms: this process's over the
	// call (search_files searches on several goroutines), ripgrep's own
	// (its threads, from the kernel's accounting of the exited process).
	CPU float64 `json:"cpu_ms"`
}

// searchCase is a query of the comparison: search_files' arguments.
type searchCase struct {
	name    string
	queries []string
	fold    bool
	context int
}

// searchCases are BenchmarkSearchFiles' (builtin/workspace): one
// string, and three strings case-insensitively with a line of context.
var searchCases = []searchCase{
	{name: "one_string", queries: []string{texttree.Needle}},
	{name: "three_strings_icase_ctx1", queries: []string{strings.ToUpper(texttree.Needle), strings.ToLower(texttree.Marker), "absent_word"}, fold: true, context: 1},
}

// The workspace the tree is written to: search_files finds it at
// Root/<OrgID>/<UserID>.
var searchScope = tool.Scope{OrgID: "bench-org", UserID: "bench-user", ConversationID: "bench-conv", TurnID: "bench-turn"}

// runSearch is comparison 4: search_files in this process, ripgrep as a
// process per search (as a tool layer shelling out to it would run it).
func (r *runner) runSearch(ctx context.Context) (*SearchReport, error) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		return nil, fmt.Errorf("ripgrep (rg): %w", err)
	}
	files, rounds := 20_000, 10
	if r.o.Short {
		files, rounds = 1_000, 3
	}
	root, err := os.MkdirTemp(r.tmp, "search-*")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, searchScope.OrgID, searchScope.UserID)
	r.logf("search: writing %d files", files)
	if err := texttree.Write(dir, files); err != nil {
		return nil, err
	}
	rep := &SearchReport{Files: files}
	if rep.Bytes, err = treeBytes(dir); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, rg, "--version").Output(); err == nil {
		rep.Ripgrep, _, _ = strings.Cut(string(out), "\n")
	}
	var search *tool.Tool
	for _, t := range workspace.Tools(workspace.Config{Root: root}) {
		if t.Name() == "search_files" {
			search = t
		}
	}
	for _, c := range searchCases {
		r.logf("search: %s, %d rounds", c.name, rounds)
		sc, err := c.run(ctx, search, rg, dir, rounds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		rep.Cases = append(rep.Cases, sc)
	}
	return rep, nil
}

// run runs the case: one warm-up search each (it also checks that both
// find the same lines), then rounds rounds of one search each.
func (c searchCase) run(ctx context.Context, search *tool.Tool, rg, dir string, rounds int) (SearchCase, error) {
	out := SearchCase{Name: c.name, Queries: c.queries, CaseInsensitive: c.fold, Context: c.context, Searches: rounds}
	args, err := json.Marshal(map[string]any{"queries": c.queries, "case_insensitive": c.fold, "context": c.context})
	if err != nil {
		return out, err
	}
	quiver := func() (string, time.Duration, error) {
		cpu0 := procstat.SelfCPU()
		res, err := search.Run(ctx, searchScope, args)
		if err == nil && res.IsError {
			err = fmt.Errorf("search_files: %s", res.Content)
		}
		return res.Content, procstat.SelfCPU() - cpu0, err
	}
	ripgrep := func() (string, time.Duration, error) { return runRipgrep(ctx, rg, c.flags(), dir) }
	if err := c.agree(quiver, ripgrep, &out); err != nil {
		return out, err
	}
	var qs, rs sideTimes
	for range rounds {
		if err := qs.add(quiver); err != nil {
			return out, err
		}
		if err := rs.add(ripgrep); err != nil {
			return out, err
		}
	}
	out.Quiver, out.Ripgrep = qs.stats(), rs.stats()
	out.Ratio = ratio(out.Quiver.P50, out.Ripgrep.P50)
	out.CPURatio = ratio(out.Quiver.CPU, out.Ripgrep.CPU)
	return out, nil
}

// agree runs each side once and checks that both found the same matching
// lines, and some unless the case looks for nothing that exists.
func (c searchCase) agree(quiver, ripgrep func() (string, time.Duration, error), out *SearchCase) error {
	qOut, _, err := quiver()
	if err != nil {
		return err
	}
	rOut, _, err := ripgrep()
	if err != nil {
		return err
	}
	if strings.Contains(qOut, "more were cut") {
		return errors.New("search_files cut its output: the tree has more matches than it shows")
	}
	q, g := matchingLines(qOut, ""), matchingLines(rOut, "./")
	if !slices.Equal(q, g) {
		return fmt.Errorf("search_files found %d matching lines, ripgrep %d (first of each: %v, %v)", len(q), len(g), q[:min(1, len(q))], g[:min(1, len(g))])
	}
	if len(q) == 0 {
		return errors.New("neither found a match: the tree holds no marker")
	}
	out.Matches = len(q)
	return nil
}

// flags are the ripgrep flags with search_files' semantics: literal
// strings (-e each, any matches), the same case folding and context,
// the same size cap, hidden and ignored files included, grouped by file
// with line numbers.
func (c searchCase) flags() []string {
	f := []string{"--no-config", "--fixed-strings", "--hidden", "--no-ignore", "--max-filesize", "1M",
		"--heading", "--line-number", "--context", strconv.Itoa(c.context)}
	if c.fold {
		f = append(f, "--ignore-case")
	}
	for _, q := range c.queries {
		f = append(f, "-e", q)
	}
	return append(f, ".")
}

// runRipgrep runs rg in dir and returns its output and CPU time; exit
// status 1 (no match) is not an error.
func runRipgrep(ctx context.Context, rg string, flags []string, dir string) (string, time.Duration, error) {
	cmd := exec.CommandContext(ctx, rg, flags...)
	cmd.Dir = dir
	cmd.Env = []string{}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return "", 0, fmt.Errorf("rg: %w: %s", err, stderr.String())
	}
	ps := cmd.ProcessState
	return stdout.String(), ps.UserTime() + ps.SystemTime(), nil
}

// matchingLines are the "path:line" of every matching line in grep-style
// output grouped by file (a path line, then "12:text" for a match and
// "13-text" for context, "--" between groups), sorted; trim is cut from
// the front of paths.
func matchingLines(out, trim string) []string {
	var lines []string
	path := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			path = ""
			continue
		}
		if path == "" {
			path = strings.TrimPrefix(l, trim)
			continue
		}
		digits := strings.IndexFunc(l, func(r rune) bool { return r < '0' || r > '9' })
		if digits > 0 && l[digits] == ':' {
			lines = append(lines, path+":"+l[:digits])
		}
	}
	slices.Sort(lines)
	return lines
}

// sideTimes collects one side's searches.
type sideTimes struct {
	wall []time.Duration
	cpu  time.Duration
}

// add times one search.
func (s *sideTimes) add(search func() (string, time.Duration, error)) error {
	start := time.Now()
	_, cpu, err := search()
	if err != nil {
		return err
	}
	s.wall = append(s.wall, time.Since(start))
	s.cpu += cpu
	return nil
}

func (s *sideTimes) stats() SearchStats {
	var sum time.Duration
	for _, d := range s.wall {
		sum += d
	}
	n := float64(len(s.wall))
	return SearchStats{P50: ms(percentile(s.wall, 0.5)), Mean: ms(sum) / n, CPU: ms(s.cpu) / n}
}

// treeBytes is the size of the regular files under dir.
func treeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}
