package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/quiverhq/quiver/tool"
)

// scanner runs one search: a walker feeds file paths in lexical order to a
// pool of workers that read and search files concurrently; the collector
// takes their results back in walk order, so the output is deterministic,
// and stops everything once the first files hold more matches than can be
// shown.
type scanner struct {
	root     *os.Root
	m        *matcher
	context  int   // lines each side of a match
	maxBytes int64 // larger files are skipped
	limit    int   // matching lines wanted
}

// searchJob is one file to search, numbered in walk order, opened by name
// in its folder (see walk.go).
type searchJob struct {
	idx  int
	path string // relative to the workspace, for output and glob
	dir  *dirHandle
	name string // within dir
}

// fileResult is what one file gave.
type fileResult struct {
	idx     int
	path    string
	lines   []outLine // matching lines with their context
	matches int       // matching lines among them
	skipped bool      // over maxBytes
}

// outLine is one line of output.
type outLine struct {
	num   int
	text  string
	match bool
	gap   bool // not adjacent to the line before it
}

// scanResult is the files with matches, in walk order.
type scanResult struct {
	files   []fileResult
	limit   int
	more    bool // more matches exist than limit
	skipped int  // files over maxBytes
	deep    int  // folders not searched for being nested too deep
}

func (sc *scanner) run(parent context.Context, folder, glob string) (*scanResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	jobs := make(chan searchJob, 256)
	results := make(chan fileResult, 256)
	var walkErr error
	deep := 0
	go func() {
		deep, walkErr = sc.walk(ctx, folder, glob, jobs)
		close(jobs)
	}()
	var wg sync.WaitGroup
	for range max(4, runtime.GOMAXPROCS(0)) {
		wg.Go(func() { sc.work(ctx, jobs, results) })
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	res := sc.collect(results, cancel)
	// results is closed: the walker and the workers are done.
	if err := parent.Err(); err != nil {
		return nil, tool.Infra(err)
	}
	if walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return nil, tool.Infra(fmt.Errorf("search_files: walk: %w", walkErr))
	}
	res.deep = deep
	return res, nil
}

// collect takes results back in walk order until there are more matches than
// the limit, then cancels the rest. It drains results until closed.
func (sc *scanner) collect(results <-chan fileResult, cancel func()) *scanResult {
	res := &scanResult{limit: sc.limit}
	pending := map[int]fileResult{}
	next, total := 0, 0
	for r := range results {
		if res.more {
			continue
		}
		pending[r.idx] = r
		for p, ok := pending[next]; ok && !res.more; p, ok = pending[next] {
			delete(pending, next)
			next++
			if p.skipped {
				res.skipped++
			}
			if p.matches > 0 {
				res.files = append(res.files, p)
			}
			total += p.matches
			if total > sc.limit {
				res.more = true
				cancel()
			}
		}
	}
	return res
}

// work searches files until jobs closes. Each worker keeps its own buffers.
func (sc *scanner) work(ctx context.Context, jobs <-chan searchJob, results chan<- fileResult) {
	var buf, fold []byte
	for j := range jobs {
		if ctx.Err() == nil {
			results <- sc.searchFile(j, &buf, &fold)
		} // else drain: the collector wants no more
		j.dir.release()
	}
}

// searchFile reads one file and finds its matching lines. A file that cannot
// be opened, is not a regular singly linked file, or is binary gives no
// lines; one over maxBytes is marked skipped.
func (sc *scanner) searchFile(j searchJob, buf, fold *[]byte) fileResult {
	r := fileResult{idx: j.idx, path: j.path}
	data, err := readRegularAt(j.dir.fd, j.name, sc.maxBytes, buf)
	if errors.Is(err, errTooBig) {
		r.skipped = true
	}
	if err != nil || bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
		return r
	}
	starts := sc.m.find(data, sc.limit+1, fold)
	r.lines = withContext(data, starts, sc.context)
	r.matches = len(starts)
	return r
}
