package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWalkRefusesPipeFolder stands for a folder swapped for a named pipe
// after search_files checked it: the walk must fail, not block.
func TestWalkRefusesPipeFolder(t *testing.T) {
	e := newEnv(t, Config{})
	fifo := filepath.Join(e.dir(), "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	root, err := os.OpenRoot(e.dir())
	must(t, err)
	defer root.Close()
	sc := &scanner{root: root}
	jobs := make(chan searchJob, 1)
	if err := returnsSoon(t, fifo, func() error { _, err := sc.walk(t.Context(), "fifo", "", jobs); return err }); err == nil {
		t.Error("walk of a named pipe succeeded")
	}
}

// TestWalkOpensRefuseSwaps opens, as the walk does, names whose kind
// changed since the listing: a link to a file or folder inside, a named
// pipe, a hard link, a folder. Each open must fail without blocking.
func TestWalkOpensRefuseSwaps(t *testing.T) {
	e := newEnv(t, Config{})
	hostile(t, e)
	must(t, os.Symlink("sub", filepath.Join(e.dir(), "dir-in")))
	dirfd, err := syscall.Open(e.dir(), syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	must(t, err)
	defer syscall.Close(dirfd)
	fifo := filepath.Join(e.dir(), "fifo")
	var buf []byte
	for _, name := range []string{"in-link", "rel-out", "fifo", "hard-out", "sub", "sock"} {
		err := returnsSoon(t, fifo, func() error { _, err := readRegularAt(dirfd, name, 1<<20, &buf); return err })
		if err == nil {
			t.Errorf("readRegularAt %s succeeded", name)
		}
	}
	if _, err := readRegularAt(dirfd, "real.txt", 1<<20, &buf); err != nil {
		t.Errorf("readRegularAt real.txt: %v", err)
	}
	for _, name := range []string{"dir-in", "dir-out", "fifo", "real.txt"} {
		err := returnsSoon(t, fifo, func() error {
			fd, err := openDirAt(dirfd, name)
			if err == nil {
				syscall.Close(fd)
			}
			return err
		})
		if err == nil {
			t.Errorf("openDirAt %s succeeded", name)
		}
	}
}

// TestWalkStopsWhenCancelled walks a tree where no file passes the glob, so
// no send notices the cancellation: the walk itself must.
func TestWalkStopsWhenCancelled(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("a/b/c.txt", "x")
	root, err := os.OpenRoot(e.dir())
	must(t, err)
	defer root.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sc := &scanner{root: root}
	if _, err := sc.walk(ctx, ".", "*.none", make(chan searchJob)); err != context.Canceled {
		t.Errorf("walk with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestSearchFilesDepthBounded nests folders past maxDepth: the walk holds a
// descriptor per level, so it must not follow them all the way down.
func TestSearchFilesDepthBounded(t *testing.T) {
	e := newEnv(t, Config{})
	deep := strings.Repeat("d/", maxDepth)     // files in the deepest folder searched
	deeper := strings.Repeat("d/", maxDepth+1) // one level too deep
	e.put("top.txt", "needle\n", deep+"in.txt", "needle\n", deeper+"out.txt", "needle\n")
	got := e.mustCall("search_files", `{"queries":["needle"]}`)
	want := deep + "in.txt\n1:needle\n\ntop.txt\n1:needle\n[skipped 1 folders nested more than 64 levels deep]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search_files (-want +got):\n%s", diff)
	}
}
