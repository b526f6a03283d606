package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/quiverhq/quiver/tool"
)

// newWriter returns a separate set of tools over e's root with cfg's
// limits, as another process would build: it shares nothing with e or
// another writer but the folder.
func (e *env) newWriter(cfg Config) *workspaces {
	cfg.Root = e.root
	return &workspaces{cfg: cfg.withDefaults()}
}

// holdLock takes the default workspace's lock on a descriptor of its own
// and returns the function that releases it.
func (e *env) holdLock(t *testing.T) func() {
	t.Helper()
	w := e.newWriter(Config{})
	root, err := w.open(e.scope)
	must(t, err)
	l, err := w.lock(t.Context(), root)
	if err != nil {
		root.Close()
		t.Fatalf("lock: %v", err)
	}
	return func() { l.unlock(); root.Close() }
}

// race runs first's call and, once first has passed its checks (holding
// the lock, before it changes anything), second's call: it lets first go
// on only when second has either finished or found the lock held. Without
// the lock second would run its whole call inside first's. It returns
// both calls' errors.
func race(first, second *workspaces, call func(w *workspaces) error) (err1, err2 error) {
	blocked, done := make(chan struct{}), make(chan struct{})
	second.contended = onceFunc(func() { close(blocked) })
	first.checked = onceFunc(func() {
		go func() { err2 = call(second); close(done) }()
		select {
		case <-blocked:
		case <-done:
		}
	})
	err1 = call(first)
	<-done
	return err1, err2
}

// onceFunc returns a function that runs f the first time only.
func onceFunc(f func()) func() {
	ran := false
	return func() {
		if !ran {
			ran = true
			f()
		}
	}
}

// TestConcurrentWritesKeepTheQuota: two writers, each of which fits the
// workspace quota alone but not together, race on one workspace; the
// second waits for the first and is refused.
func TestConcurrentWritesKeepTheQuota(t *testing.T) {
	cfg := Config{MaxWorkspaceBytes: 100}
	e := newEnv(t, cfg)
	a, b := e.newWriter(cfg), e.newWriter(cfg)
	name := map[*workspaces]string{a: "a.txt", b: "b.txt"}
	errA, errB := race(a, b, func(w *workspaces) error {
		_, err := w.write(t.Context(), e.scope, writeIn{Files: []fileIn{{Path: name[w], Content: strings.Repeat("x", 60)}}})
		return err
	})
	if errA != nil {
		t.Fatalf("first write: %v", errA)
	}
	wantErr(t, errB, "nothing written", "workspace quota: the workspace would hold 120 bytes; the limit is 100 bytes (now 60)")
	if got := e.get("b.txt"); got != "<missing>" {
		t.Errorf("the second write went through the quota: b.txt = %q", got)
	}
}

// TestConcurrentEditsLoseNothing: two edits of one file race; the second
// reads the file only once the first has written it, so both edits stay.
func TestConcurrentEditsLoseNothing(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("log.txt", "start\n")
	a, b := e.newWriter(Config{}), e.newWriter(Config{})
	edit := map[*workspaces]string{a: "start A", b: "start B"}
	errA, errB := race(a, b, func(w *workspaces) error {
		_, err := w.edit(t.Context(), e.scope, editIn{Path: "log.txt", OldString: "start", NewString: edit[w]})
		return err
	})
	if errA != nil || errB != nil {
		t.Fatalf("edits: %v, %v", errA, errB)
	}
	if got := e.get("log.txt"); got != "start B A\n" {
		t.Errorf("log.txt = %q, want both edits, %q", got, "start B A\n")
	}
}

// TestWritesWaitForTheLock runs each write tool while the workspace's lock
// is held elsewhere: it changes nothing until the lock is released, then
// does its work.
func TestWritesWaitForTheLock(t *testing.T) {
	tests := []struct {
		name string
		call func(ctx context.Context, w *workspaces, s tool.Scope) error
		want string // f.txt afterwards
	}{
		{"write_file", func(ctx context.Context, w *workspaces, s tool.Scope) error {
			_, err := w.write(ctx, s, writeIn{Files: []fileIn{{Path: "f.txt", Content: "written"}}})
			return err
		}, "written"},
		{"edit_file", func(ctx context.Context, w *workspaces, s tool.Scope) error {
			_, err := w.edit(ctx, s, editIn{Path: "f.txt", OldString: "old", NewString: "edited"})
			return err
		}, "edited"},
		{"delete_file", func(ctx context.Context, w *workspaces, s tool.Scope) error {
			_, err := w.delete(ctx, s, deleteIn{Path: "f.txt"})
			return err
		}, "<missing>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.put("f.txt", "old")
			release := e.holdLock(t)
			w := e.newWriter(Config{})
			blocked, done := make(chan struct{}), make(chan error, 1)
			w.contended = onceFunc(func() { close(blocked) })
			go func() { done <- tc.call(t.Context(), w, e.scope) }()
			select {
			case <-blocked:
			case err := <-done:
				release()
				t.Fatalf("%s ran while the lock was held (err %v)", tc.name, err)
			}
			if got := e.get("f.txt"); got != "old" {
				t.Errorf("f.txt = %q while the lock was held, want it unchanged", got)
			}
			release()
			if err := <-done; err != nil {
				t.Fatalf("%s after the lock was released: %v", tc.name, err)
			}
			if got := e.get("f.txt"); got != tc.want {
				t.Errorf("f.txt = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLockWaitEndsWithTheContext: a write waiting for the lock gives up,
// as an infrastructure error wrapping the context's, when its context
// ends, and writes nothing.
func TestLockWaitEndsWithTheContext(t *testing.T) {
	e := newEnv(t, Config{})
	release := e.holdLock(t)
	defer release()
	w := e.newWriter(Config{})
	ctx, cancel := context.WithCancel(t.Context())
	w.contended = cancel
	_, err := w.write(ctx, e.scope, writeIn{Files: []fileIn{{Path: "f.txt", Content: "x"}}})
	if !tool.IsInfra(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("write waiting for the lock, cancelled: err = %v, want an infrastructure error wrapping context.Canceled", err)
	}
	if got := e.get("f.txt"); got != "<missing>" {
		t.Errorf("f.txt = %q, want nothing written", got)
	}
}

// TestReservedNamesRefused: paths through the names Quiver keeps for
// itself are refused by every tool, with nothing changed.
func TestReservedNamesRefused(t *testing.T) {
	e := newEnv(t, Config{})
	e.mustCall("write_file", writeArgs(t, file{"a.txt", "a"}))
	before, err := os.ReadFile(filepath.Join(e.dir(), lockName))
	must(t, err)
	calls := []struct{ tool, args string }{
		{"read_file", `{"path":".quiver-lock"}`},
		{"write_file", `{"files":[{"path":".quiver-lock","content":"x"}]}`},
		{"write_file", `{"files":[{"path":"ok.txt","content":"x"},{"path":"d/.quiver-tmp-1","content":"x"}]}`},
		{"edit_file", `{"path":".quiver-lock","old_string":"a","new_string":"x"}`},
		{"edit_file", `{"path":"./.quiver-lock","old_string":"a","new_string":"x"}`},
		{"delete_file", `{"path":".quiver-lock"}`},
		{"delete_file", `{"path":"d/../.quiver-lock"}`},
		{"list_files", `{"folder":".quiver-x"}`},
		{"search_files", `{"queries":["x"],"folder":".quiver-x/y"}`},
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			_, err := e.call(c.tool, c.args)
			wantErr(t, err, "reserved for Quiver's own files")
		})
	}
	after, err := os.ReadFile(filepath.Join(e.dir(), lockName))
	must(t, err)
	if string(after) != string(before) || e.get("ok.txt") != "<missing>" {
		t.Errorf("a refused call changed the workspace: lock %q, ok.txt %q", after, e.get("ok.txt"))
	}
}

// TestReservedNamesHidden: the lock file and a write in progress (a
// temporary file holding part of a file) are neither listed, searched nor
// counted against the quotas.
func TestReservedNamesHidden(t *testing.T) {
	e := newEnv(t, Config{MaxFiles: 2})
	e.mustCall("write_file", writeArgs(t, file{"a.txt", "needle in a"}))
	e.put(".quiver-tmp-0123456789abcdef", "needle half-writ", "d/.quiver-tmp-fedcba9876543210", "needle")
	if got := e.mustCall("list_files", `{}`); got != "a.txt (11 B)\nd/" {
		t.Errorf("list_files = %q, want only a.txt and d/", got)
	}
	got := e.mustCall("search_files", `{"queries":["needle"]}`)
	if !strings.Contains(got, "a.txt") || strings.Contains(got, reservedPrefix) {
		t.Errorf("search_files = %q, want a.txt's match and no reserved file", got)
	}
	// a.txt and the two temporary files count (they take disk space);
	// the lock file does not, or this write would be over MaxFiles.
	_, err := e.call("write_file", writeArgs(t, file{"b.txt", "b"}))
	wantErr(t, err, "file-count quota: the workspace would hold 4 files")
	if _, err := os.Stat(filepath.Join(e.dir(), lockName)); err != nil {
		t.Fatalf("no lock file after writes: %v", err)
	}
	e2 := newEnv(t, Config{MaxFiles: 2})
	e2.mustCall("write_file", writeArgs(t, file{"a.txt", "a"}))
	e2.mustCall("write_file", writeArgs(t, file{"b.txt", "b"}))
}

// TestLockFileMustBeRegular: when something other than a regular file
// holds the lock's name, writes fail as infrastructure errors and change
// nothing, rather than write unlocked.
func TestLockFileMustBeRegular(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"folder", func(t *testing.T, dir string) { must(t, os.Mkdir(filepath.Join(dir, lockName), 0o700)) }},
		{"symbolic link", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "target"), nil, 0o600))
			must(t, os.Symlink("target", filepath.Join(dir, lockName)))
		}},
		{"named pipe", func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, lockName), 0o600)) }},
		{"hard link", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "other"), nil, 0o600))
			must(t, os.Link(filepath.Join(dir, "other"), filepath.Join(dir, lockName)))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.put("f.txt", "old")
			tc.setup(t, e.dir())
			for _, c := range []struct{ tool, args string }{
				{"write_file", `{"files":[{"path":"f.txt","content":"new"}]}`},
				{"edit_file", `{"path":"f.txt","old_string":"old","new_string":"new"}`},
				{"delete_file", `{"path":"f.txt"}`},
			} {
				if _, err := e.call(c.tool, c.args); !tool.IsInfra(err) {
					t.Errorf("%s: err = %v, want an infrastructure error", c.tool, err)
				}
			}
			if got := e.get("f.txt"); got != "old" {
				t.Errorf("f.txt = %q, want it unchanged", got)
			}
		})
	}
}
