package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// The search walk is the one hot path of the package, so it goes below
// os.Root: the Root's per-path resolution (an openat per component), its
// eager lstat of every listed entry and os.File's poller registration more
// than doubled the time of a 20,000-file search (BenchmarkSearchFiles).
// Confinement holds by construction instead: the starting
// folder is opened through the Root; below it every open is an openat of a
// single name, taken from the folder's own listing ("." and ".." never
// appear), relative to a folder descriptor already inside, with O_NOFOLLOW.
// A link swapped in after the listing fails with ELOOP; a FIFO swapped in
// cannot block (O_NONBLOCK) and fails the fstat check like any non-regular
// file.

// errTooBig marks a file skipped for its size.
var errTooBig = errors.New("file too big")

// dirHandle is an open folder, shared by the walker and the jobs of its
// files, and closed when the last of them releases it.
type dirHandle struct {
	f    *os.File
	fd   int
	refs atomic.Int32
}

// newDirHandle takes ownership of fd, an open folder, with one reference.
func newDirHandle(fd int, name string) *dirHandle {
	h := &dirHandle{f: os.NewFile(uintptr(fd), name), fd: fd}
	h.refs.Store(1)
	return h
}

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		d.f.Close()
	}
}

// openDirAt opens the folder name, one component, in the folder dirfd.
func openDirAt(dirfd int, name string) (int, error) {
	return syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}

// walkState is what a walk counts as it goes.
type walkState struct {
	idx  int // files sent so far
	deep int // folders left out for being nested over maxDepth levels
}

// walk sends every regular file under folder that passes glob, in lexical
// order as fs.WalkDir would. Links are not followed and other kinds of file
// never opened. An unreadable sub-folder is left out, and so is one nested
// more than maxDepth levels deep in the workspace, as each level holds a
// descriptor open until the walk leaves it; walk returns how many of those.
func (sc *scanner) walk(ctx context.Context, folder, glob string, jobs chan<- searchJob) (int, error) {
	// O_DIRECTORY: a named pipe put in the folder's place since openFolder
	// looked at it is refused; a plain open would block on it.
	top, err := sc.root.OpenFile(folder, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return 0, err
	}
	// A fresh descriptor, not tied to the Root: listing a Root's folder
	// stats every entry, which the walk does not need.
	fd, err := openDirAt(int(top.Fd()), ".")
	top.Close()
	if err != nil {
		return 0, err
	}
	var st walkState
	err = walkDir(ctx, newDirHandle(fd, folder), folder, glob, jobs, &st)
	return st.deep, err
}

// walkDir walks one folder, rel being its path in the workspace. It owns a
// reference to h and releases it. It stops when ctx is done, even where no
// file passes the glob.
func walkDir(ctx context.Context, h *dirHandle, rel, glob string, jobs chan<- searchJob, st *walkState) error {
	defer h.release()
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := h.f.ReadDir(-1)
	if err != nil {
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		p := path.Join(rel, e.Name())
		switch {
		case reserved(e.Name()):
			// The lock file, or a write in progress: a temporary file
			// may hold half of what is being written.
		case e.IsDir() && strings.Count(p, "/") >= maxDepth:
			st.deep++
		case e.IsDir():
			fd, err := openDirAt(h.fd, e.Name())
			if err != nil {
				continue
			}
			if err := walkDir(ctx, newDirHandle(fd, p), p, glob, jobs, st); err != nil {
				return err
			}
		case e.Type().IsRegular() && globMatch(glob, p):
			h.refs.Add(1)
			select {
			case jobs <- searchJob{idx: st.idx, path: p, dir: h, name: e.Name()}:
				st.idx++
			case <-ctx.Done():
				h.release()
				return ctx.Err()
			}
		}
	}
	return nil
}

// readRegularAt reads the file name, one component, in the folder dirfd if
// it is a regular singly linked file of at most max bytes (else errTooBig).
// The data is in *buf, grown as needed; a file that shrank gives less.
func readRegularAt(dirfd int, name string, max int64, buf *[]byte) ([]byte, error) {
	fd, err := syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1:
		return nil, errors.New("not a regular singly linked file")
	case st.Size > max:
		return nil, errTooBig
	}
	if int64(cap(*buf)) < st.Size {
		*buf = make([]byte, st.Size+st.Size/4)
	}
	b := (*buf)[:st.Size]
	n := 0
	for n < len(b) {
		m, err := syscall.Read(fd, b[n:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return nil, err
		case m == 0:
			return b[:n], nil
		}
		n += m
	}
	return b, nil
}
