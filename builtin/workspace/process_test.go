package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quiverhq/quiver/tool"
)

// childEnv, when set, makes the test binary a second writer process (see
// runChild) instead of running tests: its value is a childJob in JSON.
const childEnv = "QUIVER_WORKSPACE_TEST_CHILD"

// TestMain lets the test binary stand in for another Quiver process on
// the same data folder.
func TestMain(m *testing.M) {
	if job := os.Getenv(childEnv); job != "" {
		os.Exit(runChild(job))
	}
	os.Exit(m.Run())
}

// childJob is what a child process does.
type childJob struct {
	// Mode is "once" (one write_file, saying "contended" on stdout when
	// it finds the lock held, then "done") or "hammer" (writes until its
	// stdin closes, then prints its hammerStats as JSON).
	Mode   string
	Cfg    Config
	Scope  tool.Scope
	Writer string
	Seed   uint64
}

// runChild runs job and returns the exit status; failures go to stderr.
func runChild(raw string) int {
	var job childJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		fmt.Fprintln(os.Stderr, "child: bad job:", err)
		return 2
	}
	w := &workspaces{cfg: job.Cfg.withDefaults()}
	var err error
	switch job.Mode {
	case "once":
		w.contended = onceFunc(func() { fmt.Println("contended") })
		_, err = w.write(context.Background(), job.Scope, writeIn{Files: []fileIn{{Path: "once.txt", Content: "from the child"}}})
		fmt.Println("done")
	case "hammer":
		err = childHammer(w, job)
	default:
		err = fmt.Errorf("unknown mode %q", job.Mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// childHammer hammers until stdin closes, saying "op" on stdout after
// each operation, then "stats" and its hammerStats in JSON.
func childHammer(w *workspaces, job childJob) error {
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	fmt.Println("ready")
	h := newHammer(w, job.Scope, job.Writer, job.Seed)
	for i := 0; ; i++ {
		select {
		case <-stop:
			raw, err := json.Marshal(h.stats)
			fmt.Printf("stats %s\n", raw)
			return err
		default:
		}
		if err := h.step(i); err != nil {
			return err
		}
		if err := h.checkShared(); err != nil {
			return err
		}
		// "op", or "op all" once it has written, edited and deleted.
		if h.stats.all() {
			fmt.Println("op all")
		} else {
			fmt.Println("op")
		}
	}
}

// startChild starts the test binary as a child process running job, with
// pipes to its stdin and stdout; its stderr is logged when t ends.
func startChild(t *testing.T, job childJob) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	raw, err := json.Marshal(job)
	must(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("child stderr:\n%s", stderr.String())
		}
	})
	return cmd, stdin, bufio.NewReader(stdout)
}

// readChildLine reads one line of the child's output, failing the test at EOF.
func readChildLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's output: %v (after %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

// TestLockExcludesAnotherProcess holds a workspace's lock in this process
// while a second process writes to that workspace: the child waits (it
// says it found the lock held, and its file is not there) until the lock
// is released, then writes.
func TestLockExcludesAnotherProcess(t *testing.T) {
	e := newEnv(t, Config{})
	release := e.holdLock(t)
	cmd, _, out := startChild(t, childJob{Mode: "once", Cfg: Config{Root: e.root}, Scope: e.scope})
	if line := readChildLine(t, out); line != "contended" {
		release()
		t.Fatalf("the child said %q first, want %q: it wrote while this process held the lock", line, "contended")
	}
	if got := e.get("once.txt"); got != "<missing>" {
		t.Errorf("once.txt = %q while this process held the lock", got)
	}
	release()
	if line := readChildLine(t, out); line != "done" {
		t.Errorf("the child said %q, want done", line)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if got := e.get("once.txt"); got != "from the child" {
		t.Errorf("once.txt = %q after the child's write", got)
	}
}

// hammerCfg is the workspace both hammering processes write: small quotas
// that the writes keep running into.
var hammerCfg = Config{MaxFileBytes: 3000, MaxWorkspaceBytes: 24_000, MaxFiles: 40}

// TestTwoProcessesHammerOneWorkspace runs a second process writing,
// editing and deleting files in one workspace while this process does the
// same: this process goes on until it has made parentOps operations and
// the child, meanwhile, childOps. Between its operations this process
// checks, holding the workspace's lock (so no write is half done), that
// the quotas hold; both processes read shared files lock-free and check
// that each is whole. At the end every file must be whole, no temporary
// file left, and the quotas held.
func TestTwoProcessesHammerOneWorkspace(t *testing.T) {
	const parentOps, childOps = 300, 100
	cfg := hammerCfg
	e := newEnv(t, cfg)
	cfg.Root = e.root
	cmd, stdin, out := startChild(t, childJob{Mode: "hammer", Cfg: cfg, Scope: e.scope, Writer: "child", Seed: 2})
	if line := readChildLine(t, out); line != "ready" {
		t.Fatalf("the child said %q, want ready", line)
	}
	var childDone atomic.Int64
	var childAll atomic.Bool
	result := make(chan childResult, 1)
	go func() { result <- readChildOps(out, &childDone, &childAll) }()
	h := newHammer(e.newWriter(cfg), e.scope, "parent", 1)
	// Both go on until each made its share and each has written, edited
	// and deleted at least once (an edit refused because the other
	// process changed the file first is no edit; under load a child's
	// first hundred operations can have none).
	for i := 0; i < parentOps || childDone.Load() < childOps || !h.stats.all() || !childAll.Load(); i++ {
		if err := h.step(i); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		if err := h.checkShared(); err != nil {
			t.Fatal(err)
		}
		e.checkQuotaHeld(t, cfg, fmt.Sprintf("after op %d", i))
		if i > 100*parentOps {
			t.Fatalf("the child made %d operations while this process made %d", childDone.Load(), i)
		}
	}
	must(t, stdin.Close())
	r := <-result
	if r.err != nil {
		t.Fatalf("the child's output: %v", r.err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	t.Logf("parent %+v; child %+v", h.stats, r.stats)
	for who, s := range map[string]hammerStats{"parent": h.stats, "child": r.stats} {
		if s.Wrote == 0 || s.Edited == 0 || s.Deleted == 0 {
			t.Errorf("%s made no write, edit or delete: %+v", who, s)
		}
	}
	if h.stats.Refused+r.stats.Refused == 0 {
		t.Errorf("no write reached a quota: the test did not test them")
	}
	e.checkQuotaHeld(t, cfg, "at the end")
	e.checkAllWhole(t)
}

// childResult is the end of a hammering child's output.
type childResult struct {
	stats hammerStats
	err   error
}

// readChildOps counts the child's "op" lines into done (setting all at
// its first "op all") until its "stats" line, which it returns decoded.
func readChildOps(out *bufio.Reader, done *atomic.Int64, all *atomic.Bool) childResult {
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			return childResult{err: fmt.Errorf("after %d operations: %w", done.Load(), err)}
		}
		switch line = strings.TrimSuffix(line, "\n"); {
		case line == "op" || line == "op all":
			done.Add(1)
			if line == "op all" {
				all.Store(true)
			}
		case strings.HasPrefix(line, "stats "):
			var r childResult
			r.err = json.Unmarshal([]byte(strings.TrimPrefix(line, "stats ")), &r.stats)
			return r
		default:
			return childResult{err: fmt.Errorf("unexpected line %q", line)}
		}
	}
}

// checkQuotaHeld counts what the default workspace holds, holding its
// lock, and fails unless every quota holds and its ledger, if clean, says
// exactly what the count found.
func (e *env) checkQuotaHeld(t *testing.T, cfg Config, when string) {
	t.Helper()
	release := e.holdLock(t)
	defer release()
	u := e.count(t)
	if l, ok := e.ledger(t); ok && l != u {
		t.Fatalf("%s: the ledger says %+v; the workspace holds %+v", when, l, u)
	}
	if u.bytes > cfg.MaxWorkspaceBytes || u.files > cfg.MaxFiles || u.folders > cfg.MaxFiles {
		t.Fatalf("%s: the workspace holds %d bytes, %d files, %d folders; the quotas are %d bytes and %d files",
			when, u.bytes, u.files, u.folders, cfg.MaxWorkspaceBytes, cfg.MaxFiles)
	}
}

// checkAllWhole fails unless every file in the default workspace is a
// whole hammer file, and nothing reserved but the lock file is left.
func (e *env) checkAllWhole(t *testing.T) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(e.dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(e.dir(), p)
		if rel == lockName {
			return nil
		}
		if reserved(d.Name()) {
			t.Errorf("%s left behind", rel)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !whole(data) {
			t.Errorf("%s is not whole: %.80q", rel, data)
		}
		n++
		return nil
	})
	must(t, err)
	if n == 0 {
		t.Error("no file at the end")
	}
}

// hammerStats counts what a hammer did.
type hammerStats struct {
	Ops, Wrote, Edited, Deleted, Refused int
}

// all reports whether s has a write, an edit and a delete.
func (s hammerStats) all() bool { return s.Wrote > 0 && s.Edited > 0 && s.Deleted > 0 }

// hammer is one writer's sequence of random operations on a workspace
// another writer shares: writes of shared and own files, edits of shared
// files, deletes of both.
type hammer struct {
	w      *workspaces
	scope  tool.Scope
	writer string
	rng    *rand.Rand
	dir    string   // the workspace's host folder
	own    []string // own files written and not yet deleted
	stats  hammerStats
}

const hammerShared = 6 // shared files, shared/s0 ...

func newHammer(w *workspaces, s tool.Scope, writer string, seed uint64) *hammer {
	return &hammer{
		w: w, scope: s, writer: writer, rng: rand.New(rand.NewPCG(seed, seed)),
		dir: filepath.Join(w.cfg.Root, s.OrgID, s.UserID),
	}
}

// step runs operation i. Refusals a concurrent writer can cause (a quota
// reached, a file deleted or changed since) are counted; any other error
// is returned.
func (h *hammer) step(i int) error {
	h.stats.Ops++
	ctx := context.Background()
	shared := fmt.Sprintf("shared/s%d", h.rng.IntN(hammerShared))
	content := hammerContent(h.writer, i, 200+h.rng.IntN(2700))
	var err error
	switch op := h.rng.IntN(10); {
	case op < 4:
		_, err = h.w.write(ctx, h.scope, writeIn{Files: []fileIn{{Path: shared, Content: content}}})
		h.count(err, &h.stats.Wrote)
	case op < 7:
		name := fmt.Sprintf("own/%s-%d", h.writer, i)
		_, err = h.w.write(ctx, h.scope, writeIn{Files: []fileIn{{Path: name, Content: content}}})
		if h.count(err, &h.stats.Wrote) {
			h.own = append(h.own, name)
		}
	case op < 9:
		old, rerr := os.ReadFile(filepath.Join(h.dir, shared))
		if rerr != nil {
			return nil // not written yet, or just deleted
		}
		_, err = h.w.edit(ctx, h.scope, editIn{Path: shared, OldString: string(old), NewString: content})
		h.count(err, &h.stats.Edited)
	default:
		name := shared
		if len(h.own) > 0 && h.rng.IntN(2) == 0 {
			k := h.rng.IntN(len(h.own))
			name, h.own = h.own[k], append(h.own[:k], h.own[k+1:]...)
		}
		_, err = h.w.delete(ctx, h.scope, deleteIn{Path: name})
		h.count(err, &h.stats.Deleted)
	}
	if err != nil && !expectedRefusal(err) {
		return fmt.Errorf("%s op %d: %w", h.writer, i, err)
	}
	return nil
}

// count adds a success to *n, or a quota refusal to Refused, and reports
// whether err is nil.
func (h *hammer) count(err error, n *int) bool {
	switch {
	case err == nil:
		*n++
	case strings.Contains(err.Error(), "quota"):
		h.stats.Refused++
	}
	return err == nil
}

// expectedRefusal reports whether err is one that a concurrent writer may
// cause: a quota reached, a file deleted, or changed since it was read.
func expectedRefusal(err error) bool {
	if tool.IsInfra(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "quota") || strings.Contains(msg, "does not exist") ||
		strings.Contains(msg, "was not found")
}

// checkShared reads a shared file lock-free and fails unless it is whole
// or missing.
func (h *hammer) checkShared() error {
	name := fmt.Sprintf("shared/s%d", h.rng.IntN(hammerShared))
	data, err := os.ReadFile(filepath.Join(h.dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: read %s: %w", h.writer, name, err)
	case !whole(data):
		return fmt.Errorf("%s: read %s while the other wrote: not whole: %.80q", h.writer, name, data)
	}
	return nil
}

// hammerContent is a file of about size bytes that says who wrote it and
// ends with a line holding a digest of the rest, so a mix of two writes,
// or part of one, shows.
func hammerContent(writer string, i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d\n", writer, i)
	line := strings.Repeat(string(rune('a'+i%26)), 59) + "\n"
	for b.Len()+len(line) < size {
		b.WriteString(line)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return b.String() + "#" + hex.EncodeToString(sum[:8]) + "\n"
}

// whole reports whether data is one hammerContent, complete.
func whole(data []byte) bool {
	const trailer = 1 + 16 + 1
	if len(data) < trailer || data[len(data)-trailer] != '#' || data[len(data)-1] != '\n' {
		return false
	}
	body := data[:len(data)-trailer]
	sum := sha256.Sum256(body)
	return string(data[len(data)-trailer+1:len(data)-1]) == hex.EncodeToString(sum[:8])
}
