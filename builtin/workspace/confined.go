package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"

	"github.com/quiverhq/quiver/tool"
)

// MaxListedFiles bounds the names one [Confined.ListFiles] returns.
const MaxListedFiles = maxListScan

// Confined is one scope's workspace opened for a program that reads and
// writes it by path, such as run_code's sandboxed scripts (it implements
// sandbox.Workspace). It applies the tools' own rules: every path passes
// CleanPath and the folder-depth bound, the Root keeps every step inside
// the folder, only regular singly linked files are read or replaced, and
// each write holds the workspace's lock while it checks the quotas and
// renames a complete file into place, so a script's writes count against
// the same quotas as write_file's, with any number of other writers.
//
// Unlike write_file, a write may replace an existing file of any length:
// the rewrite limit saves the model's tokens, and a script's text costs
// none.
//
// A Confined belongs to one tool call: it holds that call's context (the
// sandbox.Workspace interface has none) for the lock waits, and is used
// from one goroutine at a time. Close it when the call ends.
type Confined struct {
	w    *workspaces
	root *os.Root
	ctx  context.Context
}

// Open opens the workspace of scope s under cfg (the same Config as
// [Tools]; its zero limits mean their defaults), creating it on first use.
// Errors are infrastructure errors (tool.Infra): a scope whose IDs are not
// path segments, or a Root that cannot be created or opened. Open panics
// when cfg.Root is empty, as Tools does.
func Open(ctx context.Context, cfg Config, s tool.Scope) (*Confined, error) {
	if cfg.Root == "" {
		panic("workspace: Config.Root is empty")
	}
	w := &workspaces{cfg: cfg.withDefaults()}
	root, err := w.open(s)
	if err != nil {
		return nil, err
	}
	return &Confined{w: w, root: root, ctx: ctx}, nil
}

// Close releases the workspace's folder.
func (c *Confined) Close() error { return c.root.Close() }

// MaxFileBytes is the per-file quota in force: the largest file ReadFile
// returns and WriteFile accepts.
func (c *Confined) MaxFileBytes() int64 { return c.w.cfg.MaxFileBytes }

// ReadFile returns the content of the regular file at p, a path relative
// to the workspace. A file larger than the per-file quota is refused
// unread. The messages are the tools' own, written for the model.
func (c *Confined) ReadFile(p string) ([]byte, error) {
	name, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	f, fi, err := openRegular(c.root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > c.w.cfg.MaxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes; files over %d bytes cannot be read here", name, fi.Size(), c.w.cfg.MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, c.w.cfg.MaxFileBytes+1))
	if err != nil {
		return nil, fsError(name, err)
	}
	if int64(len(data)) > c.w.cfg.MaxFileBytes { // grew since the stat
		return nil, fmt.Errorf("%s is over %d bytes; files that large cannot be read here", name, c.w.cfg.MaxFileBytes)
	}
	return data, nil
}

// WriteFile creates or replaces the file at p with data, as write_file
// writes one file: under the workspace's lock, after the per-file,
// workspace and file- and folder-count quotas are checked, by an atomic
// rename. When it fails nothing is changed (but folders a failed rename
// created).
func (c *Confined) WriteFile(p string, data []byte) error {
	name, err := cleanPath(p)
	if err == nil {
		err = checkDepth(name)
	}
	if err != nil {
		return err
	}
	l, err := c.w.lock(c.ctx, c.root)
	if err != nil {
		return err
	}
	defer l.unlock()
	t, err := writeTarget(c.root, name)
	if err != nil {
		return err
	}
	u, err := c.w.usage(c.root, l)
	if err != nil {
		return err
	}
	changes := []change{{target: t, newSize: int64(len(data))}}
	deltas, err := c.w.checkQuota(c.root, u, changes)
	if err != nil {
		return err
	}
	c.w.passed()
	if err := l.begin(); err != nil {
		return err
	}
	if err := writeAtomic(c.root, t, data); err != nil {
		return err // the ledger stays dirty: the next write measures
	}
	l.commit(u.add(deltas[0]))
	return nil
}

// ListFiles returns the regular files under folder dir ("." is the
// workspace), at any depth, as sorted paths relative to the workspace.
// Quiver's reserved names are left out, and so are links and anything
// deeper than the tools go. More than MaxListedFiles files is an error
// that says to list a subfolder.
func (c *Confined) ListFiles(dir string) ([]string, error) {
	folder, err := cleanFolder(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := c.root.Stat(folder); err != nil {
		return nil, fsError(folder, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", folder)
	}
	var names []string
	errTooMany := errors.New("too many")
	err = fs.WalkDir(dirFS{c.root}, folder, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p != folder && reserved(d.Name()):
			return skip(d)
		case d.IsDir() && p != "." && checkDepth(p+"/x") != nil:
			return fs.SkipDir
		case !d.Type().IsRegular():
			return nil
		case len(names) == MaxListedFiles:
			return errTooMany
		}
		names = append(names, path.Clean(p))
		return nil
	})
	switch {
	case errors.Is(err, errTooMany):
		return nil, fmt.Errorf("%s holds more than %d files; list a folder inside it", folder, MaxListedFiles)
	case err != nil:
		return nil, fsError(folder, err)
	}
	slices.Sort(names)
	return names, nil
}
