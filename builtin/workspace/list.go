package workspace

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quiverhq/quiver/tool"
)

//go:embed list_files.md
var listDescription string

type listIn struct {
	Folder string `json:"folder,omitempty" jsonschema:"folder to list; default: the whole workspace"`
}

func (w *workspaces) listTool() *tool.Tool {
	s := spec("list_files", listDescription, tool.Read, tool.Limit{Name: "max_entries", Value: maxListEntries})
	return tool.New(s, w.list)
}

// errEnough stops a walk that has gathered all it may show.
var errEnough = errors.New("enough entries")

func (w *workspaces) list(ctx context.Context, s tool.Scope, in listIn) (string, error) {
	root, err := w.open(s)
	if err != nil {
		return "", err
	}
	defer root.Close()
	folder, err := openFolder(root, in.Folder)
	if err != nil {
		return "", fmt.Errorf("list_files: %w", err)
	}
	var b strings.Builder
	n := 0
	err = fs.WalkDir(dirFS{root}, folder, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil || p == folder {
			return nil // unreadable folders are left out, not fatal
		}
		if reserved(d.Name()) {
			return skip(d) // the lock file, a write in progress
		}
		if n++; n > maxListEntries {
			return errEnough
		}
		b.WriteString(listEntry(root, p, d))
		b.WriteByte('\n')
		return nil
	})
	switch {
	case errors.Is(err, errEnough):
		fmt.Fprintf(&b, "[listing cut at %d entries; pass folder to list one part of the workspace]\n", maxListEntries)
	case err != nil:
		return "", tool.Infra(fmt.Errorf("list_files: %w", err))
	case n == 0 && folder == ".":
		return "The workspace is empty.", nil
	case n == 0:
		return fmt.Sprintf("Folder %s is empty.", folder), nil
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// openFolder checks an optional folder argument and that it is a folder.
func openFolder(root *os.Root, folder string) (string, error) {
	folder, err := cleanFolder(folder)
	if err != nil {
		return "", err
	}
	fi, err := root.Stat(folder)
	if err != nil {
		return "", fsError(folder, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", folder)
	}
	return folder, nil
}

// listEntry renders one entry: "dir/", "file (12 B)", "link -> target" or
// the kind of anything else.
func listEntry(root *os.Root, p string, d fs.DirEntry) string {
	switch t := d.Type(); {
	case t.IsDir():
		return p + "/"
	case t&fs.ModeSymlink != 0:
		return p + " -> " + linkTarget(root, p)
	case t.IsRegular():
		fi, err := d.Info()
		if err != nil {
			return p
		}
		return fmt.Sprintf("%s (%s)", p, humanSize(fi.Size()))
	default:
		return fmt.Sprintf("%s (%s)", p, strings.TrimPrefix(fileKind(t), "a "))
	}
}

// linkTarget shows where a link points, hiding targets outside the
// workspace: they would reveal host paths.
func linkTarget(root *os.Root, p string) string {
	dest, err := root.Readlink(p)
	if _, serr := root.Stat(p); err != nil || filepath.IsAbs(dest) || escapes(serr) {
		return "(outside the workspace)"
	}
	return dest
}

// humanSize renders n bytes as "812 B", "4.2 KiB" or "1.5 MiB".
func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
