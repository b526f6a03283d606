package workspace

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quiverhq/quiver/tool"
)

//go:embed edit_file.md
var editDescription string

type editIn struct {
	Path       string `json:"path" jsonschema:"file path in the workspace"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

func (w *workspaces) editTool() *tool.Tool {
	return tool.New(spec("edit_file", editDescription, tool.Write, w.quotaLimits()...), w.edit)
}

func (w *workspaces) edit(ctx context.Context, s tool.Scope, in editIn) (string, error) {
	name, err := cleanPath(in.Path)
	if err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	switch {
	case in.OldString == "":
		return "", fmt.Errorf("edit_file: old_string is empty; to create a file use write_file")
	case in.OldString == in.NewString:
		return "", fmt.Errorf("edit_file: old_string and new_string are the same; nothing to change")
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
	t, err := writeTarget(root, name)
	if err == nil && !t.exists {
		err = fsError(name, os.ErrNotExist)
	}
	if err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	text, err := w.readForEdit(root, t)
	if err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	updated, n, err := replace(name, text, in)
	var u usage
	var deltas []usage
	if err == nil {
		u, err = w.usage(root, l)
	}
	if err == nil {
		deltas, err = w.checkQuota(root, u, []change{{target: t, newSize: int64(len(updated))}})
	}
	if err == nil {
		w.passed()
		err = l.begin()
	}
	if err == nil {
		err = writeAtomic(root, t, []byte(updated)) // on failure the ledger stays dirty
	}
	if err != nil {
		return "", fmt.Errorf("edit_file: %w", err)
	}
	l.commit(u.add(deltas[0]))
	return fmt.Sprintf("Edited %s: replaced %d occurrence(s); the file is now %d bytes.", name, n, len(updated)), nil
}

// readForEdit reads the whole of a file to edit, refusing one over the
// per-file quota (the edited file could not be written back).
func (w *workspaces) readForEdit(root *os.Root, t target) (string, error) {
	if t.size > w.cfg.MaxFileBytes {
		return "", fmt.Errorf("per-file quota: %s is %d bytes; the limit is %d bytes", t.name, t.size, w.cfg.MaxFileBytes)
	}
	f, _, err := openRegular(root, t.name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, w.cfg.MaxFileBytes+1))
	if err != nil {
		return "", fsError(t.name, err)
	}
	if int64(len(data)) > w.cfg.MaxFileBytes {
		// It grew since t was taken: editing the part read would cut it.
		return "", fmt.Errorf("per-file quota: %s is over %d bytes; the limit is %d bytes", t.name, w.cfg.MaxFileBytes, w.cfg.MaxFileBytes)
	}
	return string(data), nil
}

// replace applies one edit to text and returns the result and the number of
// replacements. No occurrence, or several without replace_all, is an error.
func replace(name, text string, in editIn) (string, int, error) {
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return "", 0, fmt.Errorf("old_string was not found in %s; read_file shows the current text, which must match exactly, whitespace included", name)
	case n > 1 && !in.ReplaceAll:
		return "", 0, fmt.Errorf("old_string occurs %d times in %s; include more surrounding text to make it unique, or set replace_all to replace all %d", n, name, n)
	case in.ReplaceAll:
		return strings.ReplaceAll(text, in.OldString, in.NewString), n, nil
	}
	return strings.Replace(text, in.OldString, in.NewString, 1), 1, nil
}
