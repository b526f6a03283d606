package workspace

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"

	"github.com/quiverhq/quiver/tool"
)

//go:embed delete_file.md
var deleteDescription string

type deleteIn struct {
	Path string `json:"path" jsonschema:"file path in the workspace"`
}

func (w *workspaces) deleteTool() *tool.Tool {
	return tool.New(spec("delete_file", deleteDescription, tool.Write), w.delete)
}

// delete removes one regular file. Folders are refused on purpose: a
// recursive delete is one wrong path away from losing the workspace, and an
// empty folder costs nothing to keep.
func (w *workspaces) delete(ctx context.Context, s tool.Scope, in deleteIn) (string, error) {
	name, err := cleanPath(in.Path)
	if err != nil {
		return "", fmt.Errorf("delete_file: %w", err)
	}
	root, err := w.open(s)
	if err != nil {
		return "", err
	}
	defer root.Close()
	l, err := w.lock(ctx, root)
	if err != nil {
		return "", err
	}
	defer l.unlock()
	fi, err := root.Lstat(name)
	if err != nil {
		return "", fmt.Errorf("delete_file: %w", fsError(name, err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("delete_file: %w", linkError(root, name))
	}
	if fi.IsDir() {
		return "", fmt.Errorf("delete_file: %s is a folder; delete_file deletes files only", name)
	}
	if err := checkRegular(name, fi); err != nil {
		return "", fmt.Errorf("delete_file: %w", err)
	}
	u, err := w.usage(root, l)
	if err == nil {
		w.passed()
		err = l.begin()
	}
	if err != nil {
		return "", fmt.Errorf("delete_file: %w", err)
	}
	if err := root.Remove(name); err != nil {
		return "", fmt.Errorf("delete_file: %w", fsError(name, err)) // the ledger stays dirty
	}
	l.commit(u.add(usage{bytes: -fi.Size(), files: -1}))
	return fmt.Sprintf("Deleted %s (%d bytes).", name, fi.Size()), nil
}
