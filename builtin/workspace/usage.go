package workspace

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/quiverhq/quiver/tool"
)

// Quota accounting. A write must know what the workspace holds to check
// the quotas. Walking the workspace for it on every write cost time in
// proportion to the whole tree, and through os.Root's per-path resolution
// to its depth squared (4.6 s for a one-byte write_file at the folder cap
// in deep chains: BenchmarkWriteOneByte). Instead each workspace keeps a
// ledger of its usage, and a write costs the same whatever the workspace
// holds:
//
//   - The ledger is the content of the lock file, one fixed-length record
//     (encodeLedger) that only a writer holding the lock reads or writes.
//     It lives in the file that is locked so that on NFS the lock's cache
//     revalidation covers it: a replica that takes the lock reads what the
//     last holder wrote, whichever replica that was.
//   - A write reads the ledger once it holds the lock. A clean record's
//     totals are the workspace's. A missing, damaged or dirty one (a
//     workspace written by an older Quiver, a writer that died) is
//     replaced: the write measures the workspace, one walk linear in its
//     entries, and records the totals.
//   - Before changing anything a write marks the ledger dirty; after its
//     last change it records the new totals, clean. A writer that dies
//     between the two (its lock goes with it) leaves the ledger dirty, so
//     the next write measures again, and so does one that fails part way.
//   - A measure that fails records nothing: the write is refused, nothing
//     changed, and the next write measures again; the first that succeeds
//     records a clean ledger. A failure the workspace's content causes (a
//     folder nested deeper than the tools write, put there by other
//     means) is said to the model, naming the folder, rather than logged
//     as the server's.
//
// No process keeps usage in memory, so there is no per-process cache to
// invalidate: every process and replica reads the same record under the
// same lock, and concurrent writers cannot pass a quota.
//
// The ledger does not see files changed other than through the tools (by
// hand, or restored into a live folder), nor, after a power loss or kernel
// crash, the changes of the write in flight then (the record is not synced
// with the renames; writes to a workspace are serialised, so that is at
// most one call: maxWriteFiles files and their folders). Emptying the lock
// file (": > .quiver-lock", never deleting it) makes the next write
// measure again.

// usage is what a workspace holds now.
type usage struct {
	bytes   int64 // total size of regular files
	files   int   // entries that are not folders
	folders int   // folders, the workspace's own not counted
}

// add returns u changed by d.
func (u usage) add(d usage) usage {
	return usage{bytes: u.bytes + d.bytes, files: u.files + d.files, folders: u.folders + d.folders}
}

// The states of a ledger record.
const (
	ledgerClean = "clean"
	ledgerDirty = "dirty"
)

// ledgerMagic starts every record; the number is the format's version.
const ledgerMagic = "quiver-usage 1"

// encodeLedger renders a record: the magic, the state, the three totals
// zero-padded to a fixed width, and a CRC-32 of all that, so that every
// record has the same length (ledgerLen) and rewriting it in place never
// leaves a tail of an older one.
func encodeLedger(state string, u usage) []byte {
	body := fmt.Sprintf("%s %s %020d %020d %020d", ledgerMagic, state, u.bytes, u.files, u.folders)
	return fmt.Appendf(nil, "%s %08x\n", body, crc32.ChecksumIEEE([]byte(body)))
}

// ledgerLen is the length of every record.
var ledgerLen = len(encodeLedger(ledgerClean, usage{}))

// decodeLedger parses a record; ok is false unless rec is exactly one
// whole, clean record.
func decodeLedger(rec []byte) (u usage, ok bool) {
	if len(rec) != ledgerLen || rec[len(rec)-1] != '\n' {
		return usage{}, false
	}
	body, sum := string(rec[:len(rec)-10]), string(rec[len(rec)-9:len(rec)-1])
	if rec[len(rec)-10] != ' ' || sum != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))) {
		return usage{}, false
	}
	f := strings.Fields(strings.TrimPrefix(body, ledgerMagic+" "))
	if !strings.HasPrefix(body, ledgerMagic+" ") || len(f) != 4 || f[0] != ledgerClean {
		return usage{}, false
	}
	var n [3]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || v < 0 {
			return usage{}, false
		}
		n[i] = v
	}
	return usage{bytes: n[0], files: int(n[1]), folders: int(n[2])}, true
}

// usage returns what root, whose lock l the caller holds, holds now: from
// its ledger when that is clean, else measured and recorded.
func (w *workspaces) usage(root *os.Root, l writeLock) (usage, error) {
	rec := make([]byte, ledgerLen+1)
	n, err := l.f.ReadAt(rec, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return usage{}, tool.Infra(fmt.Errorf("workspace: read the usage ledger: %w", err))
	}
	if u, ok := decodeLedger(rec[:n]); ok {
		return u, nil
	}
	u, err := w.measure(root)
	var deep *tooDeepError
	switch {
	case errors.As(err, &deep):
		return usage{}, err
	case err != nil:
		return usage{}, tool.Infra(err)
	}
	if err := l.f.Truncate(int64(ledgerLen)); err != nil {
		return usage{}, tool.Infra(fmt.Errorf("workspace: reset the usage ledger: %w", err))
	}
	if err := l.record(ledgerClean, u); err != nil {
		return usage{}, tool.Infra(err)
	}
	return u, nil
}

// record writes the ledger in place.
func (l writeLock) record(state string, u usage) error {
	if _, err := l.f.WriteAt(encodeLedger(state, u), 0); err != nil {
		return fmt.Errorf("workspace: write the usage ledger: %w", err)
	}
	return nil
}

// begin marks the ledger dirty before a write changes anything; an error
// is the caller's to return, nothing changed.
func (l writeLock) begin() error {
	if err := l.record(ledgerDirty, usage{}); err != nil {
		return tool.Infra(err)
	}
	return nil
}

// commit records u, what the workspace holds after a write's last change.
// If that fails the ledger stays dirty and the next write measures again,
// which is all a failure here can cost.
func (l writeLock) commit(u usage) { _ = l.record(ledgerClean, u) }

// tooDeepError is a measure that found a folder nested deeper than
// maxFolderDepth: only other means than the tools put one there.
type tooDeepError struct{ folder string }

func (e *tooDeepError) Error() string {
	return fmt.Sprintf("the workspace's usage cannot be measured: the folder %s is nested more than %d folders deep, "+
		"deeper than the workspace tools write (it was put there by other means); move or remove it to write to this workspace again",
		e.folder, maxFolderDepth)
}

// measure counts what root holds, walking it without following links. The
// lock file is not counted: it is Quiver's, and always there once written
// to. Below the Root every folder is opened by one name relative to its
// parent's descriptor (O_NOFOLLOW) and every entry looked at with
// fstatat(AT_SYMLINK_NOFOLLOW), so the walk is linear in the entries
// whatever the depth. It holds a descriptor per level it is down, so it
// goes at most maxFolderDepth folders deep: a deeper folder is a
// *tooDeepError, with at most maxFolderDepth+1 descriptors held.
func (w *workspaces) measure(root *os.Root) (usage, error) {
	top, err := root.OpenFile(".", os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return usage{}, fmt.Errorf("workspace: measure usage: %w", err)
	}
	fd, err := openDirAt(int(top.Fd()), ".")
	top.Close()
	if err != nil {
		return usage{}, fmt.Errorf("workspace: measure usage: %w", err)
	}
	var u usage
	var deep *tooDeepError
	switch err := w.measureDir(fd, ".", 0, &u); {
	case errors.As(err, &deep):
		return usage{}, err
	case err != nil:
		return usage{}, fmt.Errorf("workspace: measure usage: %w", err)
	}
	return u, nil
}

// measureDir adds what the folder fd, at rel in the workspace and depth
// folders deep in it (the workspace itself 0), holds to u. It owns fd and
// closes it.
func (w *workspaces) measureDir(fd int, rel string, depth int, u *usage) error {
	d := os.NewFile(uintptr(fd), rel)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, name := range names {
		w.visit()
		if rel == "." && name == lockName {
			continue
		}
		var st unix.Stat_t
		switch err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
		case errors.Is(err, syscall.ENOENT):
			continue // gone since the listing
		case err != nil:
			return fmt.Errorf("%s: %w", path.Join(rel, name), err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			u.folders++
			sub := path.Join(rel, name)
			if depth+1 > maxFolderDepth {
				return &tooDeepError{folder: sub}
			}
			subfd, err := openDirAt(fd, name)
			if err != nil {
				return fmt.Errorf("%s: %w", sub, err)
			}
			if err := w.measureDir(subfd, sub, depth+1, u); err != nil {
				return err
			}
		case unix.S_IFREG:
			u.files++
			u.bytes += st.Size
		default:
			u.files++
		}
	}
	return nil
}

// visit runs the visited hook, if any: a walk read one name.
func (w *workspaces) visit() {
	if w.visited != nil {
		w.visited()
	}
}
