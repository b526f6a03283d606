package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/quiverhq/quiver/tool"
)

// Writes to one workspace are serialised by a lock that holds across
// processes: an flock(2) on the file lockName in the workspace's folder,
// taken for the whole of each write_file, edit_file and delete_file call,
// from the first look at what it will change (sizes for the quota, the
// text an edit replaces) to the last rename. So the quota a call checks
// is the workspace as its writes will find it, and an edit never loses a
// write made since it read the file — whether the other writer is
// another turn of this process, another process, or another replica
// sharing the data folder over a network file system. An flock belongs
// to an open file description, so each call opens the file afresh: two
// calls in one process exclude each other exactly as two processes do.
//
// Reads take no lock. A write replaces a file by renaming a complete,
// synced temporary file over it (writeAtomic), so a reader that opens the
// file gets the old content or the new, whole; the temporary files
// themselves are never listed, searched or read.

// reservedPrefix starts every name Quiver keeps in a workspace for
// itself: the lock file and temporary files. The tools refuse a path with
// a component that starts with it, and leave such names out of lists and
// searches.
const reservedPrefix = ".quiver-"

// ReservedPrefix is reservedPrefix, for what copies workspaces (an
// archive of the deployment leaves such names out).
const ReservedPrefix = reservedPrefix

// lockName is the file in a workspace's folder that its writers lock. It
// is created (0600) by the first write and never removed; it holds the
// workspace's usage ledger (usage.go).
const lockName = reservedPrefix + "lock"

// Polling bounds for a lock another writer holds. A blocking flock
// cannot wait on a context (and over NFS the kernel polls for one anyway,
// with pauses growing to 30 s unless the server calls back), so a writer
// that finds the lock held tries again after a pause that doubles from
// lockPollMin to lockPollMax, and gives up when its context is done.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 20 * time.Millisecond
)

// writeLock is a held workspace lock.
type writeLock struct{ f *os.File }

// unlock releases the lock (closing the descriptor drops the flock).
func (l writeLock) unlock() { l.f.Close() }

// lock takes root's write lock, waiting while another writer holds it,
// until ctx is done. Failures are infrastructure errors: the file system
// does not lock, or something other than a regular file has taken the
// lock's name. Nothing removes the lock file, so every writer locks the
// same one (a person deleting it while a write holds it would let the
// next write in at once: docs/postgres.md says not to).
func (w *workspaces) lock(ctx context.Context, root *os.Root) (writeLock, error) {
	f, err := openLockFile(root)
	if err != nil {
		return writeLock{}, tool.Infra(fmt.Errorf("workspace: lock: %w", err))
	}
	for pause := lockPollMin; ; pause = min(2*pause, lockPollMax) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return writeLock{f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return writeLock{}, tool.Infra(fmt.Errorf("workspace: lock: flock %s (the data folder's file system must support flock): %w", lockName, err))
		}
		if w.contended != nil {
			w.contended()
		}
		if err := wait(ctx, pause); err != nil {
			f.Close()
			return writeLock{}, tool.Infra(fmt.Errorf("workspace: waiting for another write to finish: %w", err))
		}
	}
}

// wait pauses for d, or until ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// openLockFile opens the lock file for writing, which an flock on NFS
// needs (it becomes a byte-range lock there), creating it when missing.
// It neither truncates nor writes it (the ledger, usage.go, does so under
// the lock). Anything but a regular singly linked
// file in its place is refused.
// (O_NONBLOCK: a named pipe put in its place cannot block the open.)
func openLockFile(root *os.Root) (*os.File, error) {
	if fi, err := root.Lstat(lockName); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link", lockName)
	}
	f, err := root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", lockName, err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkRegular(lockName, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// reserved reports whether name, one path component, is one Quiver keeps
// for itself.
func reserved(name string) bool { return strings.HasPrefix(name, reservedPrefix) }

// passed runs the checked hook, if any: a write has passed its checks.
func (w *workspaces) passed() {
	if w.checked != nil {
		w.checked()
	}
}

// skip is what a walk returns for a reserved entry d: leave it out, and
// all below it when it is a folder.
func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}
