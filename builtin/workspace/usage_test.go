package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// count counts what the default workspace holds, independently of the
// package's own walk: folders, non-folders, and bytes of regular files,
// leaving out the lock file.
func (e *env) count(t *testing.T) usage {
	t.Helper()
	var u usage
	dir := e.dir()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir || p == filepath.Join(dir, lockName) {
			return err
		}
		if d.IsDir() {
			u.folders++
			return nil
		}
		u.files++
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			u.bytes += fi.Size()
		}
		return nil
	})
	must(t, err)
	return u
}

// ledger decodes the default workspace's ledger; ok is false when it is
// missing, damaged or dirty.
func (e *env) ledger(t *testing.T) (usage, bool) {
	t.Helper()
	rec, err := os.ReadFile(filepath.Join(e.dir(), lockName))
	if errors.Is(err, fs.ErrNotExist) {
		return usage{}, false
	}
	must(t, err)
	return decodeLedger(rec)
}

// setLedger replaces the default workspace's lock file content, as a
// writer holding the lock would.
func (e *env) setLedger(t *testing.T, rec []byte) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(e.dir(), lockName), rec, 0o600))
}

// visits counts the names the walks of w read.
func visits(w *workspaces) *int {
	n := new(int)
	w.visited = func() { *n++ }
	return n
}

// chains puts n chains of depth folders (c0/d/d/…) under the default
// workspace, each with a file at the bottom, behind the tools' back.
func (e *env) chains(t *testing.T, n, depth int) {
	t.Helper()
	for c := range n {
		p := filepath.Join(e.dir(), fmt.Sprintf("c%d", c), strings.Repeat("d/", depth-1))
		must(t, os.MkdirAll(p, 0o700))
		must(t, os.WriteFile(filepath.Join(p, "leaf.txt"), []byte("leaf"), 0o600))
	}
}

func TestLedgerRecord(t *testing.T) {
	u := usage{bytes: 1 << 40, files: 9_999, folders: 12}
	rec := encodeLedger(ledgerClean, u)
	if len(rec) != ledgerLen || len(encodeLedger(ledgerDirty, usage{})) != ledgerLen {
		t.Fatalf("records of different lengths: %q", rec)
	}
	if got, ok := decodeLedger(rec); !ok || got != u {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", u, got, ok)
	}
	bad := map[string][]byte{
		"empty":     nil,
		"dirty":     encodeLedger(ledgerDirty, u),
		"truncated": rec[:len(rec)-1],
		"longer":    append(append([]byte{}, rec...), 'x'),
		"flipped":   []byte(strings.Replace(string(rec), "9999", "9998", 1)),
		"negative":  encodeLedger(ledgerClean, usage{bytes: -1}),
		"old magic": []byte(strings.Replace(string(rec), ledgerMagic, "quiver-usage 0", 1)),
	}
	for name, rec := range bad {
		if got, ok := decodeLedger(rec); ok {
			t.Errorf("%s: decoded as %+v, want refused", name, got)
		}
	}
}

// TestWriteCostIndependentOfTheTree: once a workspace has been measured,
// its writes read no folder, however many folders it holds: a write at
// the folder cap in deep chains costs what it costs in an empty workspace.
// Without the ledger every write walks the whole tree.
func TestWriteCostIndependentOfTheTree(t *testing.T) {
	e := newEnv(t, Config{MaxFiles: 200})
	e.chains(t, 4, 50) // the folder cap
	w := e.newWriter(Config{MaxFiles: 200})
	n := visits(w)
	write := func(name, content string) {
		t.Helper()
		if _, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: name, Content: content}}}); err != nil {
			t.Fatal(err)
		}
	}
	write("x.txt", "x")
	if first := *n; first < 200 {
		t.Fatalf("the first write read %d names; it must measure the workspace (over 200 entries)", first)
	}
	*n = 0
	write("x.txt", "y")
	write("c0/d/new.txt", "z")
	if _, err := w.edit(t.Context(), e.scope, editIn{Path: "x.txt", OldString: "y", NewString: "yy"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.delete(t.Context(), e.scope, deleteIn{Path: "c0/d/new.txt"}); err != nil {
		t.Fatal(err)
	}
	if *n != 0 {
		t.Errorf("writes, an edit and a delete after the first read %d names; want 0", *n)
	}
	_, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "new/f.txt", Content: "f"}}})
	wantErr(t, err, "folder-count quota: the workspace would hold 201 folders; the limit is 200 folders")
	if *n != 0 {
		t.Errorf("a write refused at the folder cap read %d names; want 0", *n)
	}
	if l, ok := e.ledger(t); !ok || l != e.count(t) {
		t.Errorf("ledger %+v (clean %v), workspace %+v", l, ok, e.count(t))
	}
}

// TestLedgerFollowsEveryChange checks the ledger against a count after
// each kind of change, new folders, replacements and refusals included.
func TestLedgerFollowsEveryChange(t *testing.T) {
	e := newEnv(t, Config{MaxWorkspaceBytes: 100})
	e.put("old.txt", "12345", "pre/x", "x")
	steps := []struct{ tool, args string }{
		{"write_file", `{"files":[{"path":"a/b/c.txt","content":"abc"},{"path":"a/b/d/e.txt","content":"e"},{"path":"old.txt","content":"1"}]}`},
		{"edit_file", `{"path":"a/b/c.txt","old_string":"b","new_string":"bbbb"}`},
		{"write_file", `{"files":[{"path":"big.txt","content":"` + strings.Repeat("x", 99) + `"}]}`}, // refused
		{"delete_file", `{"path":"pre/x"}`},
		{"delete_file", `{"path":"a/b/d/e.txt"}`},
		{"write_file", `{"files":[{"path":"a/b/d/e.txt","content":"again"}]}`},
	}
	for _, s := range steps {
		e.call(s.tool, s.args)
		got, ok := e.ledger(t)
		if want := e.count(t); !ok || got != want {
			t.Fatalf("after %s %s: ledger %+v (clean %v), workspace %+v", s.tool, s.args, got, ok, want)
		}
	}
}

// TestLedgerRemeasured: a ledger that is missing (an older Quiver's empty
// lock file), damaged, or left dirty by a writer that died mid-write is
// not trusted: the next write measures, and counts what is there.
func TestLedgerRemeasured(t *testing.T) {
	for name, rec := range map[string][]byte{
		"empty":   nil,
		"damaged": []byte("quiver-usage 1 clean 0"),
		"dirty":   encodeLedger(ledgerDirty, usage{}),
		"stale":   encodeLedger(ledgerClean, usage{bytes: 1, files: 1}), // trusted: see below
	} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{MaxFiles: 2}
			e := newEnv(t, cfg)
			e.mustCall("write_file", writeArgs(t, file{"a.txt", "a"}))
			// What a writer that died left: a temporary file, and the
			// ledger as the case has it.
			e.put("d/.quiver-tmp-0123456789abcdef", "half")
			e.setLedger(t, rec)
			w := e.newWriter(cfg)
			n := visits(w)
			_, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "b.txt", Content: "b"}}})
			if name == "stale" {
				// A clean record is trusted: what was put in by other
				// means is not seen until the lock file is emptied.
				if err != nil || *n != 0 {
					t.Fatalf("write over a clean ledger: %v, %d names read", err, *n)
				}
				return
			}
			wantErr(t, err, "nothing written", "file-count quota: the workspace would hold 3 files")
			if *n == 0 {
				t.Error("the write read no name: it trusted the ledger")
			}
			if got, ok := e.ledger(t); !ok || got != e.count(t) {
				t.Errorf("ledger %+v (clean %v) after measuring, workspace %+v", got, ok, e.count(t))
			}
		})
	}
}

// TestFailedWriteLeavesLedgerDirty: a write that fails after its checks
// (here the target became a folder holding a file meanwhile) leaves the
// ledger dirty, so the next write measures what it left.
func TestFailedWriteLeavesLedgerDirty(t *testing.T) {
	e := newEnv(t, Config{})
	e.mustCall("write_file", writeArgs(t, file{"keep.txt", "k"}))
	w := e.newWriter(Config{})
	w.checked = func() { // behind the tools' back, the ledger left as it is
		must(t, os.MkdirAll(filepath.Join(e.dir(), "p/q/t"), 0o700))
		must(t, os.WriteFile(filepath.Join(e.dir(), "p/q/t/inner.txt"), []byte("in"), 0o600))
	}
	_, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "p/q/t", Content: "x"}}})
	if err == nil {
		t.Fatal("the write over a folder succeeded")
	}
	if got, ok := e.ledger(t); ok {
		t.Fatalf("ledger clean (%+v) after a failed write", got)
	}
	e.mustCall("write_file", writeArgs(t, file{"keep.txt", "kk"}))
	if got, ok := e.ledger(t); !ok || got != e.count(t) {
		t.Errorf("ledger %+v (clean %v), workspace %+v", got, ok, e.count(t))
	}
}

// TestListFilesBoundedWalk: list_files reads at most maxListScan names
// and goes at most maxDepth levels below the folder it lists, whatever
// the workspace holds, and says what it left out.
func TestListFilesBoundedWalk(t *testing.T) {
	t.Run("deep", func(t *testing.T) {
		e := newEnv(t, Config{})
		e.chains(t, 1, maxDepth+20)
		w := e.newWriter(Config{})
		n := visits(w)
		got, err := w.list(t.Context(), e.scope, listIn{})
		must(t, err)
		lines := strings.Split(got, "\n")
		if want := maxDepth; len(lines) != want+1 {
			t.Fatalf("got %d lines, want %d folders and a note:\n%s", len(lines), want, got)
		}
		if last := lines[len(lines)-1]; last != "[1 folder more than 64 levels below the listed folder is shown without its contents; pass it as folder to list it]" {
			t.Errorf("note %q", last)
		}
		if *n > maxDepth {
			t.Errorf("read %d names, want at most %d", *n, maxDepth)
		}
		deepest := strings.TrimSuffix(lines[len(lines)-2], "/")
		got, err = w.list(t.Context(), e.scope, listIn{Folder: deepest})
		if err != nil || !strings.HasPrefix(got, deepest+"/d/") {
			t.Errorf("listing the deepest folder shown: %v\n%.200s", err, got)
		}
	})
	t.Run("wide", func(t *testing.T) {
		e := newEnv(t, Config{})
		for i := range maxListScan + 50 {
			e.put(fmt.Sprintf("big/f%05d", i), "")
		}
		e.put("a.txt", "a")
		w := e.newWriter(Config{})
		n := visits(w)
		got, err := w.list(t.Context(), e.scope, listIn{})
		must(t, err)
		if *n > maxListScan {
			t.Errorf("read %d names, want at most %d", *n, maxListScan)
		}
		lines := strings.Split(got, "\n")
		want := []string{"a.txt (1 B)", "big/"}
		if diff := cmp.Diff(want, lines[:2]); diff != "" {
			t.Errorf("first entries (-want +got):\n%s", diff)
		}
		if note := lines[len(lines)-1]; note != "[listing incomplete: list_files reads at most 5000 names per call; pass folder to list one part of the workspace]" {
			t.Errorf("note %q", note)
		}
		if len(lines) != maxListEntries+2 {
			t.Errorf("got %d lines, want %d entries and two notes", len(lines), maxListEntries)
		}
	})
}

// openFiles is how many descriptors the process has open.
func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestMeasureBoundedDepth: the measure holds a descriptor per folder
// level it is down, so it goes no deeper than maxFolderDepth. A workspace
// as deep as write_file writes is measured; a folder nested deeper (put
// there by other means) refuses the write with a message naming it,
// nothing written, instead of a descriptor per level however deep.
func TestMeasureBoundedDepth(t *testing.T) {
	deep := strings.TrimSuffix("c0/"+strings.Repeat("d/", maxFolderDepth), "/")
	for _, tc := range []struct {
		name  string
		depth int // folders in the chain
		want  string
	}{
		{"as deep as the tools write", maxFolderDepth, ""},
		{"deeper", maxFolderDepth + 40, "the folder " + deep + " is nested more than 64 folders deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.chains(t, 1, tc.depth)
			w := e.newWriter(Config{})
			base, peak := openFiles(t), 0
			w.visited = func() { peak = max(peak, openFiles(t)) }
			_, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "b.txt", Content: "b"}}})
			// The workspace, each level below it, ReadDir's own and the
			// runtime poller's two, opened on first use.
			if held := peak - base; held > maxFolderDepth+4 {
				t.Errorf("the measure held %d descriptors at once; want at most %d", held, maxFolderDepth+4)
			}
			if tc.want == "" {
				must(t, err)
				if got, ok := e.ledger(t); !ok || got != e.count(t) {
					t.Errorf("ledger %+v (clean %v), workspace %+v", got, ok, e.count(t))
				}
				return
			}
			wantErr(t, err, "write_file: nothing written", tc.want)
			if _, err := os.Lstat(filepath.Join(e.dir(), "b.txt")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("b.txt after the refused write: %v", err)
			}
		})
	}
}

// TestFailedMeasureRecovers: a measure that fails records nothing, so
// the ledger is not trusted afterwards: every write measures again until
// one succeeds, and that one records a clean ledger. Here the failure is
// a folder nested too deep, put there by hand; once it is moved up, the
// next write measures, passes, and the ones after it read no folder.
func TestFailedMeasureRecovers(t *testing.T) {
	e := newEnv(t, Config{})
	e.mustCall("write_file", writeArgs(t, file{"a.txt", "a"}))
	e.chains(t, 1, maxFolderDepth+3)
	e.setLedger(t, nil) // as an older Quiver left it: measure again
	w := e.newWriter(Config{})
	n := visits(w)
	for _, call := range []func() error{
		func() error {
			_, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "b.txt", Content: "b"}}})
			return err
		},
		func() error { _, err := w.delete(t.Context(), e.scope, deleteIn{Path: "a.txt"}); return err },
		func() error {
			_, err := w.edit(t.Context(), e.scope, editIn{Path: "a.txt", OldString: "a", NewString: "aa"})
			return err
		},
	} {
		*n = 0
		wantErr(t, call(), "is nested more than 64 folders deep", "move or remove it")
		if *n == 0 {
			t.Error("the call read no name: it trusted a ledger no measure recorded")
		}
		if got, ok := e.ledger(t); ok {
			t.Fatalf("ledger clean (%+v) after a failed measure", got)
		}
	}
	if got, err := os.ReadFile(filepath.Join(e.dir(), "a.txt")); err != nil || string(got) != "a" {
		t.Fatalf("a.txt is %q (%v) after refused calls", got, err)
	}
	// Moved up by hand: the chain is now as deep as the tools write.
	c0 := filepath.Join(e.dir(), "c0")
	must(t, os.Rename(filepath.Join(c0, strings.Repeat("d/", maxFolderDepth-1)+"d"), filepath.Join(e.dir(), "moved")))
	*n = 0
	if _, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "c.txt", Content: "c"}}}); err != nil {
		t.Fatal(err)
	}
	if *n == 0 {
		t.Error("the write after the fix read no name: it did not measure")
	}
	got, ok := e.ledger(t)
	if !ok || got != e.count(t) {
		t.Fatalf("ledger %+v (clean %v), workspace %+v", got, ok, e.count(t))
	}
	*n = 0
	if _, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: "c.txt", Content: "cc"}}}); err != nil || *n != 0 {
		t.Errorf("a write over the recorded ledger: %v, %d names read; want no error, none read", err, *n)
	}
}

// TestWriteDepthCap: write_file writes inside at most maxFolderDepth
// folders, the depth the measure goes to.
func TestWriteDepthCap(t *testing.T) {
	e := newEnv(t, Config{})
	ok := strings.Repeat("d/", maxFolderDepth) + "f.txt"
	e.mustCall("write_file", writeArgs(t, file{ok, "f"}))
	_, err := e.call("write_file", writeArgs(t, file{"x/" + ok, "f"}))
	wantErr(t, err, "nothing written", "is inside 65 folders; the limit is 64")
	e.setLedger(t, nil)
	e.mustCall("write_file", writeArgs(t, file{"g.txt", "g"}))
	if got, ok := e.ledger(t); !ok || got != e.count(t) {
		t.Errorf("ledger %+v (clean %v), workspace %+v", got, ok, e.count(t))
	}
}
