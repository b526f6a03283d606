package workspace

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/quiverhq/quiver/tool"
)

//go:embed list_files.md
var listDescription string

type listIn struct {
	Folder string `json:"folder,omitempty" jsonschema:"folder to list; default: the whole workspace"`
}

func (w *workspaces) listTool() *tool.Tool {
	s := spec("list_files", listDescription, tool.Read,
		tool.Limit{Name: "max_entries", Value: maxListEntries},
		tool.Limit{Name: "max_names_read", Value: maxListScan},
		tool.Limit{Name: "max_depth", Value: maxDepth})
	return tool.New(s, w.list)
}

// errEnough stops a walk that has gathered all it may show.
var errEnough = errors.New("enough entries")

// list_files walks below os.Root, as search_files does (walk.go), so that
// a call costs in proportion to what it shows, not to the workspace: the
// listed folder is opened through the Root, every folder below it by one
// name relative to its parent's descriptor (O_NOFOLLOW), and only the
// entries shown are looked at (fstatat, no link followed). It reads at most
// maxListScan names, shows at most maxListEntries entries, and enters
// folders at most maxDepth levels below the listed one (deeper ones are
// shown, not entered: each level holds a descriptor open).
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
	ls := &lister{w: w, ctx: ctx, root: root}
	err = ls.start(folder)
	b := &ls.out
	switch {
	case errors.Is(err, errEnough):
		fmt.Fprintf(b, "[listing cut at %d entries; pass folder to list one part of the workspace]\n", maxListEntries)
	case err != nil:
		return "", tool.Infra(fmt.Errorf("list_files: %w", err))
	case ls.shown == 0 && folder == ".":
		return "The workspace is empty.", nil
	case ls.shown == 0:
		return fmt.Sprintf("Folder %s is empty.", folder), nil
	}
	switch {
	case ls.deep == 1:
		fmt.Fprintf(b, "[1 folder more than %d levels below the listed folder is shown without its contents; pass it as folder to list it]\n", maxDepth)
	case ls.deep > 1:
		fmt.Fprintf(b, "[%d folders more than %d levels below the listed folder are shown without their contents; pass one as folder to list it]\n", ls.deep, maxDepth)
	}
	if ls.partial {
		fmt.Fprintf(b, "[listing incomplete: list_files reads at most %d names per call; pass folder to list one part of the workspace]\n", maxListScan)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// lister is one list_files walk.
type lister struct {
	w       *workspaces
	ctx     context.Context
	root    *os.Root
	out     strings.Builder
	shown   int  // entries written to out
	read    int  // names read from folders
	deep    int  // folders shown but not entered, for their depth
	partial bool // a folder was read only in part, or not entered, for maxListScan
}

// start walks folder, a folder in the workspace already checked.
func (ls *lister) start(folder string) error {
	// O_DIRECTORY: a named pipe put in the folder's place since openFolder
	// looked at it is refused; a plain open would block on it.
	top, err := ls.root.OpenFile(folder, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	fd, err := openDirAt(int(top.Fd()), ".")
	top.Close()
	if err != nil {
		return err
	}
	if folder == "." {
		folder = ""
	}
	return ls.dir(fd, folder, 0)
}

// dir lists the folder fd, at rel in the workspace ("" for the workspace
// itself) and level levels below the listed folder, in lexical order,
// and what it holds. It owns fd and closes it. A folder that cannot be
// read is left out, not fatal.
func (ls *lister) dir(fd int, rel string, level int) error {
	d := os.NewFile(uintptr(fd), rel)
	defer d.Close()
	names := ls.names(d)
	slices.Sort(names)
	for _, name := range names {
		if err := ls.ctx.Err(); err != nil {
			return err
		}
		if reserved(name) {
			continue // the lock file, a write in progress
		}
		if ls.shown == maxListEntries {
			return errEnough
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since the listing
		}
		p := path.Join(rel, name)
		ls.shown++
		ls.out.WriteString(listEntry(ls.root, p, st))
		ls.out.WriteByte('\n')
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		switch {
		case level+1 >= maxDepth:
			ls.deep++
		case ls.read >= maxListScan:
			ls.partial = true
		default:
			sub, err := openDirAt(fd, name)
			if err != nil {
				continue
			}
			if err := ls.dir(sub, p, level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// names reads d's names while the walk may read more, marking the walk
// partial when it stops short.
func (ls *lister) names(d *os.File) []string {
	var names []string
	for {
		left := maxListScan - ls.read
		if left == 0 {
			ls.partial = true
			return names
		}
		batch, err := d.Readdirnames(min(left, 256))
		ls.read += len(batch)
		for range batch {
			ls.w.visit()
		}
		names = append(names, batch...)
		if err != nil { // io.EOF at the end; other errors leave out the rest
			return names
		}
	}
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

// listEntry renders one entry, st its lstat: "dir/", "file (12 B)",
// "link -> target" or the kind of anything else.
func listEntry(root *os.Root, p string, st unix.Stat_t) string {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return p + "/"
	case unix.S_IFLNK:
		return p + " -> " + linkTarget(root, p)
	case unix.S_IFREG:
		return fmt.Sprintf("%s (%s)", p, humanSize(st.Size))
	case unix.S_IFIFO:
		return p + " (named pipe)"
	case unix.S_IFSOCK:
		return p + " (socket)"
	case unix.S_IFCHR, unix.S_IFBLK:
		return p + " (device)"
	}
	return p + " (not a regular file)"
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
