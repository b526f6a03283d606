package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/quiverhq/quiver/builtin/workspace"
)

// fileEntry is one folder or regular file under the workspaces folder.
type fileEntry struct {
	// rel is its slash-separated path in the workspaces folder:
	// <org>[/<user>[/<path in the workspace>]].
	rel   string
	dir   bool
	size  int64
	mode  fs.FileMode // permission bits only
	mtime time.Time
}

// countFiles totals entries as the manifest counts them.
func countFiles(entries []fileEntry) Files {
	var f Files
	for _, e := range entries {
		f = f.add(e)
	}
	return f
}

// add is f with e counted.
func (f Files) add(e fileEntry) Files {
	if e.dir {
		f.Folders++
	} else {
		f.Files++
		f.Bytes += e.size
	}
	return f
}

// reserved is the skip reason of a name starting workspace.ReservedPrefix
// (lock and temporary files), which an export leaves out without listing.
const reserved = "reserved"

// listWorkspaces walks the workspaces folder dir without following any
// link and returns what an archive holds of it, in walk (lexical) order,
// and what it leaves out. A missing dir holds nothing. A workspace over a
// quota of lim is an error: the import would refuse it.
func listWorkspaces(dir string, lim Limits) ([]fileEntry, []SkippedFile, error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("workspaces: %w", err)
	}
	defer root.Close()
	var entries []fileEntry
	var skipped []SkippedFile
	q := quotas{lim: lim, used: map[string]*used{}}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		e, reason, err := listEntry(p, d)
		if err != nil {
			return err
		}
		if reason != "" {
			if reason != reserved {
				skipped = append(skipped, SkippedFile{Path: p, Reason: reason})
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := q.add(e); err != nil {
			return err
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("workspaces: %w", err)
	}
	return entries, skipped, nil
}

// listEntry is the entry at p, or why an archive leaves it out.
func listEntry(p string, d fs.DirEntry) (fileEntry, string, error) {
	segs := strings.Split(p, "/")
	if strings.HasPrefix(segs[len(segs)-1], workspace.ReservedPrefix) {
		return fileEntry{}, reserved, nil
	}
	if err := checkRel(segs, d.IsDir()); err != nil {
		return fileEntry{}, err.Error(), nil
	}
	switch t := d.Type(); {
	case t&fs.ModeSymlink != 0:
		return fileEntry{}, "a symbolic link (never followed)", nil
	case !d.IsDir() && !t.IsRegular():
		return fileEntry{}, "not a regular file (a device, pipe or socket)", nil
	}
	fi, err := d.Info()
	if err != nil {
		return fileEntry{}, "", err
	}
	if !d.IsDir() && links(fi) > 1 {
		return fileEntry{}, "a file with several hard links (the workspace tools refuse it too)", nil
	}
	e := fileEntry{rel: p, dir: d.IsDir(), mode: fi.Mode().Perm(), mtime: fi.ModTime()}
	if !e.dir {
		e.size = fi.Size()
	}
	return e, "", nil
}

// checkRel checks the segments of a path in the workspaces folder: an
// organisation and a user, each one plain segment, are folders; below
// them, a path the workspace tools accept (workspace.CheckPath).
func checkRel(segs []string, dir bool) error {
	for i, s := range segs[:min(2, len(segs))] {
		if err := checkSegment(s); err != nil {
			return err
		}
		if i == len(segs)-1 && !dir {
			return errors.New("a file outside any workspace (workspaces/<org>/<user>/...)")
		}
	}
	if len(segs) > 2 {
		if err := workspace.CheckPath(strings.Join(segs[2:], "/")); err != nil {
			return fmt.Errorf("a path the workspace tools refuse: %w", err)
		}
	}
	return nil
}

// checkSegment requires an organisation's or a user's folder name to be
// one plain path segment.
func checkSegment(s string) error {
	if s == "." || strings.ContainsAny(s, `/\`) || workspace.CheckPath(s) != nil {
		return fmt.Errorf("%q is not a workspace folder name", s)
	}
	return nil
}

// links returns fi's hard-link count, or 1 when the platform does not say.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// used is what one workspace holds.
type used struct {
	files, folders int
	bytes          int64
}

// quotas adds up entries per workspace against lim: the quotas of the
// workspace tools (a file's size, a workspace's bytes, files and folders).
type quotas struct {
	lim  Limits
	used map[string]*used
}

// add counts e, refusing it past a quota.
func (q *quotas) add(e fileEntry) error {
	segs := strings.SplitN(e.rel, "/", 3)
	if len(segs) < 2 {
		return nil // an organisation's folder
	}
	key := segs[0] + "/" + segs[1]
	u := q.used[key]
	if u == nil {
		u = &used{}
		q.used[key] = u
	}
	switch {
	case len(segs) == 2: // the workspace's own folder
	case e.dir:
		if u.folders++; u.folders > q.lim.MaxFiles {
			return fmt.Errorf("workspace %s: more than %d folders (the folder-count quota)", key, q.lim.MaxFiles)
		}
	case e.size > q.lim.MaxFileBytes:
		return fmt.Errorf("workspace file %s: %d bytes; the per-file quota is %d bytes", e.rel, e.size, q.lim.MaxFileBytes)
	default:
		u.files++
		u.bytes += e.size
		if u.files > q.lim.MaxFiles {
			return fmt.Errorf("workspace %s: more than %d files (the file-count quota)", key, q.lim.MaxFiles)
		}
		if u.bytes > q.lim.MaxWorkspaceBytes {
			return fmt.Errorf("workspace %s: more than %d bytes (the workspace quota)", key, q.lim.MaxWorkspaceBytes)
		}
	}
	return nil
}

// writeWorkspaces writes entries, read from the workspaces folder dir, as
// tar entries under workspaces/. A file is opened without following a
// link and must still be the regular, singly linked file of the size
// listed: one changed meanwhile fails the export (stop the server first).
func writeWorkspaces(tw *tar.Writer, dir string, entries []fileEntry) error {
	if len(entries) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	defer root.Close()
	for _, e := range entries {
		if err := writeWorkspaceEntry(tw, root, e); err != nil {
			return fmt.Errorf("workspaces: %s: %w", e.rel, err)
		}
	}
	return nil
}

// writeWorkspaceEntry writes one entry.
func writeWorkspaceEntry(tw *tar.Writer, root *os.Root, e fileEntry) error {
	h := &tar.Header{Name: workspacesDir + e.rel, Mode: int64(e.mode), ModTime: e.mtime, Format: tar.FormatPAX}
	if e.dir {
		h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		return tw.WriteHeader(h)
	}
	f, err := root.OpenFile(e.rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || links(fi) != 1 || fi.Size() != e.size {
		return errors.New("changed while it was exported; stop the server and export again")
	}
	h.Typeflag, h.Size = tar.TypeReg, e.size
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, e.size)
	return err
}

// checkHeader validates a workspaces/ entry of an archive and returns it:
// a folder or a regular file, at a path checkRel accepts, of a size that
// is not negative. Anything else (a link, a device, a path leading out)
// refuses the archive.
func checkHeader(h *tar.Header) (fileEntry, error) {
	rel := strings.TrimPrefix(h.Name, workspacesDir)
	e := fileEntry{mode: fs.FileMode(h.Mode).Perm(), mtime: h.ModTime}
	switch h.Typeflag {
	case tar.TypeDir:
		e.dir, rel = true, strings.TrimSuffix(rel, "/")
	case tar.TypeReg:
		if h.Size < 0 {
			return fileEntry{}, fmt.Errorf("entry %q: a negative size", h.Name)
		}
		e.size = h.Size
	default:
		return fileEntry{}, fmt.Errorf("entry %q: type %q; an archive's workspaces hold only folders and regular files", h.Name, h.Typeflag)
	}
	if path.IsAbs(rel) || rel == "" {
		return fileEntry{}, fmt.Errorf("entry %q: not a path in the workspaces folder", h.Name)
	}
	segs := strings.Split(rel, "/")
	if err := checkRel(segs, e.dir); err != nil {
		return fileEntry{}, fmt.Errorf("entry %q: %w", h.Name, err)
	}
	e.rel = rel
	return e, nil
}

// extractor writes the workspaces of an archive into a staging folder,
// through an os.Root so that nothing lands outside it (no entry's path
// or link can lead out), each file created anew (O_EXCL: a path twice in
// the archive is refused) and synced.
type extractor struct {
	stage *os.Root
	dirs  []fileEntry
}

// add writes e, reading a file's bytes from r.
func (x *extractor) add(e fileEntry, r io.Reader) error {
	if e.dir {
		if err := x.stage.MkdirAll(e.rel, 0o700); err != nil {
			return fmt.Errorf("workspaces: %s: %w", e.rel, err)
		}
		x.dirs = append(x.dirs, e)
		return nil
	}
	if err := x.stage.MkdirAll(path.Dir(e.rel), 0o700); err != nil {
		return fmt.Errorf("workspaces: %s: %w", e.rel, err)
	}
	f, err := x.stage.OpenFile(e.rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("workspaces: %s: %w", e.rel, err)
	}
	// The archive's permission bits are not applied: files stay 0600 and
	// folders 0700, as the workspace tools make them, so that an archive
	// can neither open a workspace to other users of a shared data folder
	// nor lock the server out of one.
	_, err = io.CopyN(f, r, e.size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = x.stage.Chtimes(e.rel, e.mtime, e.mtime)
	}
	if err != nil {
		return fmt.Errorf("workspaces: %s: %w", e.rel, err)
	}
	return nil
}

// finish gives the folders their times, deepest first, once everything
// in them is written (their mode stays 0700, see add).
func (x *extractor) finish() error {
	for i := len(x.dirs) - 1; i >= 0; i-- {
		d := x.dirs[i]
		if err := x.stage.Chtimes(d.rel, d.mtime, d.mtime); err != nil {
			return fmt.Errorf("workspaces: %s: %w", d.rel, err)
		}
	}
	return nil
}
