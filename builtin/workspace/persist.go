package workspace

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quiverhq/quiver/tool"
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

// usage is what a workspace holds now.
type usage struct {
	bytes   int64 // total size of regular files
	files   int   // entries that are not folders
	folders int   // folders, the workspace's own not counted
}

// measure walks the workspace without following links. The lock file is
// not counted: it is Quiver's, empty, and always there once written to.
func measure(root *os.Root) (usage, error) {
	var u usage
	err := fs.WalkDir(dirFS{root}, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == lockName {
			return nil
		}
		if d.IsDir() {
			if p != "." {
				u.folders++
			}
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
	if err != nil {
		return usage{}, fmt.Errorf("workspace: measure usage: %w", err)
	}
	return u, nil
}

// checkQuota refuses changes that would break a quota, before anything is
// written. The message names the quota and the numbers.
func (w *workspaces) checkQuota(root *os.Root, changes []change) error {
	for _, c := range changes {
		if c.newSize > w.cfg.MaxFileBytes {
			return fmt.Errorf("per-file quota: %s would be %d bytes; the limit is %d bytes", c.name, c.newSize, w.cfg.MaxFileBytes)
		}
	}
	u, err := measure(root)
	if err != nil {
		return tool.Infra(err)
	}
	total, files := u.bytes, u.files
	for _, c := range changes {
		total += c.newSize - c.size
		if !c.exists {
			files++
		}
	}
	// A change that adds nothing passes even over a quota (one lowered
	// since, or files put there by other means), so that it can be fixed.
	if total > w.cfg.MaxWorkspaceBytes && total > u.bytes {
		return fmt.Errorf("workspace quota: the workspace would hold %d bytes; the limit is %d bytes (now %d); delete files you no longer need", total, w.cfg.MaxWorkspaceBytes, u.bytes)
	}
	if files > w.cfg.MaxFiles && files > u.files {
		return fmt.Errorf("file-count quota: the workspace would hold %d files; the limit is %d files; delete files you no longer need", files, w.cfg.MaxFiles)
	}
	// Folders are bounded too: delete_file leaves them behind, so without
	// this each call could add hundreds that no quota sees.
	if folders := u.folders + newFolders(root, changes); folders > w.cfg.MaxFiles && folders > u.folders {
		return fmt.Errorf("folder-count quota: the workspace would hold %d folders; the limit is %d folders; write into folders that exist", folders, w.cfg.MaxFiles)
	}
	return nil
}

// newFolders counts the folders writing changes would create: the missing
// parents of their targets, each once.
func newFolders(root *os.Root, changes []change) int {
	missing := map[string]bool{}
	for _, c := range changes {
		for d := filepath.Dir(c.name); d != "." && !missing[d]; d = filepath.Dir(d) {
			if _, err := root.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
				break
			}
			missing[d] = true
		}
	}
	return len(missing)
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
