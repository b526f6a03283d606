package workspace

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/tool"
)

//go:embed write_file.md
var writeDescription string

type fileIn struct {
	Path    string `json:"path" jsonschema:"file path in the workspace"`
	Content string `json:"content" jsonschema:"the whole content"`
}

type writeIn struct {
	Files []fileIn `json:"files" jsonschema:"files to write"`
}

func (w *workspaces) writeTool() *tool.Tool {
	s := spec("write_file", writeDescription, tool.Write, append(w.quotaLimits(),
		tool.Limit{Name: "max_files_per_call", Value: maxWriteFiles},
		tool.Limit{Name: "max_folder_depth", Value: maxFolderDepth},
		tool.Limit{Name: "max_rewrite_chars", Value: maxRewriteLen})...)
	s.Tune = func(sc *jsonschema.Schema) {
		sc.Properties["files"].MinItems = jsonschema.Ptr(1)
		sc.Properties["files"].MaxItems = jsonschema.Ptr(maxWriteFiles)
	}
	return tool.New(s, w.write)
}

func (w *workspaces) write(ctx context.Context, s tool.Scope, in writeIn) (string, error) {
	if n := len(in.Files); n == 0 || n > maxWriteFiles {
		return "", fmt.Errorf("write_file: got %d files; write 1 to %d per call", n, maxWriteFiles)
	}
	names, err := cleanNames(in.Files)
	if err != nil {
		return "", fmt.Errorf("write_file: nothing written: %w", err)
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
	changes, err := planWrites(root, names, in.Files)
	var u usage
	var deltas []usage
	if err == nil {
		u, err = w.usage(root, l)
	}
	if err == nil {
		deltas, err = w.checkQuota(root, u, changes)
	}
	if err != nil {
		return "", fmt.Errorf("write_file: nothing written: %w", err)
	}
	w.passed()
	if err := l.begin(); err != nil {
		return "", fmt.Errorf("write_file: nothing written: %w", err)
	}
	var out []string
	for i, c := range changes {
		if err := ctx.Err(); err != nil {
			l.commit(u)
			return "", tool.Infra(err)
		}
		// A failed write may leave folders it created: the ledger stays
		// dirty, and the next write measures.
		if err := writeAtomic(root, c.target, []byte(in.Files[i].Content)); err != nil {
			return "", fmt.Errorf("write_file: %w (written before it: %d of %d)", err, i, len(changes))
		}
		u = u.add(deltas[i])
		how := "new file"
		if c.exists {
			how = "replaced"
		}
		out = append(out, fmt.Sprintf("Wrote %s (%s, %d bytes).", c.name, how, c.newSize))
	}
	l.commit(u)
	return strings.Join(out, "\n"), nil
}

// cleanNames checks the paths of a call's files, before the workspace is
// opened: each is a clean relative path, none given twice.
func cleanNames(files []fileIn) ([]string, error) {
	seen := map[string]bool{}
	names := make([]string, 0, len(files))
	for _, f := range files {
		name, err := cleanPath(f.Path)
		if err == nil {
			err = checkDepth(name)
		}
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("%s is given twice", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, nil
}

// planWrites checks every file of a call, named by cleanNames, before any
// is written: what each would replace, and the rewrite limit. The caller
// holds the workspace's lock, so what it finds stays true until the writes.
func planWrites(root *os.Root, names []string, files []fileIn) ([]change, error) {
	changes := make([]change, 0, len(files))
	for i, name := range names {
		t, err := writeTarget(root, name)
		if err != nil {
			return nil, err
		}
		if err := checkRewrite(root, t); err != nil {
			return nil, err
		}
		changes = append(changes, change{target: t, newSize: int64(len(files[i].Content))})
	}
	return changes, nil
}

// checkRewrite refuses to replace the whole of an existing file longer than
// maxRewriteLen characters: sending it all again costs tokens and risks
// dropping what the model did not mean to change.
func checkRewrite(root *os.Root, t target) error {
	if !t.exists || t.size <= maxRewriteLen {
		return nil
	}
	chars := -1 // unknown, surely over: a character is at most 4 bytes
	if t.size <= utf8.UTFMax*maxRewriteLen {
		f, _, err := openRegular(root, t.name)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, utf8.UTFMax*maxRewriteLen+1))
		if err != nil {
			return fsError(t.name, err)
		}
		if chars = utf8.RuneCount(data); chars <= maxRewriteLen {
			return nil
		}
	}
	size := fmt.Sprintf("%d characters", chars)
	if chars < 0 {
		size = fmt.Sprintf("%d bytes", t.size)
	}
	return fmt.Errorf("%s already exists and has %s; write_file does not replace existing files over %d characters: use edit_file to change it", t.name, size, maxRewriteLen)
}
