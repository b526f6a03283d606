package workspace

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix starts the name of a file being written. It is short so that a
// temporary name fits wherever the target's name does, and reserved (see
// reservedPrefix), so no tool shows or opens one.
const tempPrefix = reservedPrefix + "tmp-"

// change is one file a call is about to write: the target as it is now and
// the size it will have.
type change struct {
	target
	newSize int64
}

// checkQuota refuses changes that would break a quota, before anything is
// written; u is what the workspace holds now (w.usage). The message names
// the quota and the numbers. It returns what each change will add to u,
// in order, for the ledger.
func (w *workspaces) checkQuota(root *os.Root, u usage, changes []change) ([]usage, error) {
	for _, c := range changes {
		if c.newSize > w.cfg.MaxFileBytes {
			return nil, fmt.Errorf("per-file quota: %s would be %d bytes; the limit is %d bytes", c.name, c.newSize, w.cfg.MaxFileBytes)
		}
	}
	deltas := make([]usage, len(changes))
	var sum usage
	for i, c := range changes {
		deltas[i].bytes = c.newSize - c.size
		if !c.exists {
			deltas[i].files = 1
		}
		sum = sum.add(deltas[i])
	}
	total, files := u.bytes+sum.bytes, u.files+sum.files
	// A change that adds nothing passes even over a quota (one lowered
	// since, or files put there by other means), so that it can be fixed.
	if total > w.cfg.MaxWorkspaceBytes && total > u.bytes {
		return nil, fmt.Errorf("workspace quota: the workspace would hold %d bytes; the limit is %d bytes (now %d); delete files you no longer need", total, w.cfg.MaxWorkspaceBytes, u.bytes)
	}
	if files > w.cfg.MaxFiles && files > u.files {
		return nil, fmt.Errorf("file-count quota: the workspace would hold %d files; the limit is %d files; delete files you no longer need", files, w.cfg.MaxFiles)
	}
	// Folders are bounded too: delete_file leaves them behind, so without
	// this each call could add hundreds that no quota sees.
	for i, n := range newFolders(root, changes) {
		deltas[i].folders = n
		sum.folders += n
	}
	if folders := u.folders + sum.folders; folders > w.cfg.MaxFiles && folders > u.folders {
		return nil, fmt.Errorf("folder-count quota: the workspace would hold %d folders; the limit is %d folders; write into folders that exist", folders, w.cfg.MaxFiles)
	}
	return deltas, nil
}

// newFolders counts, for each of changes in order, the folders writing it
// would create: the missing parents of its target not created for an
// earlier one.
func newFolders(root *os.Root, changes []change) []int {
	missing := map[string]bool{}
	counts := make([]int, len(changes))
	for i, c := range changes {
		for d := filepath.Dir(c.name); d != "." && !missing[d]; d = filepath.Dir(d) {
			if _, err := root.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
				break
			}
			missing[d] = true
			counts[i]++
		}
	}
	return counts
}

// writeAtomic replaces or creates t.name with data: it writes a temporary
// file in the same folder (created with O_EXCL, so never through a link),
// syncs it and renames it over the target, so a reader sees the old content
// or the new, never a mix. Missing parent folders are created (0700). An
// existing file keeps its permission bits.
func writeAtomic(root *os.Root, t target, data []byte) error {
	dir := filepath.Dir(t.name)
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return fsError(dir, err)
	}
	tmp := filepath.Join(dir, tempPrefix+strings.ToLower(rand.Text()[:16]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fsError(t.name, err)
	}
	err = fill(f, t, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, t.name)
	}
	if err != nil {
		root.Remove(tmp)
		return fsError(t.name, err)
	}
	return nil
}

// fill writes data to f, sets the mode the target had and syncs.
func fill(f *os.File, t target, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if t.exists && t.mode != 0o600 {
		if err := f.Chmod(t.mode); err != nil {
			return err
		}
	}
	return f.Sync()
}
