package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/quiverhq/quiver/tool"
)

// MaxPathBytes bounds a model-supplied path; real ones are far shorter.
const MaxPathBytes = 1024

// cleanPath checks a path the model wrote and returns it cleaned. It must be
// relative, stay inside the workspace lexically, hold no control
// character (so that it prints on one line in messages) and no component
// that Quiver reserves (the lock file, temporary files). The Root
// enforces the same at open time; checking first gives the model a clear
// message instead of an errno.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("path is empty")
	case len(p) > MaxPathBytes:
		return "", fmt.Errorf("path is %d bytes long; the limit is %d", len(p), MaxPathBytes)
	case strings.ContainsFunc(p, isControl):
		return "", errors.New("path contains a control character")
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`):
		return "", fmt.Errorf("%s is an absolute path; use a path relative to the workspace, like notes/todo.md", p)
	case !filepath.IsLocal(p):
		return "", fmt.Errorf("%s leads outside the workspace; use a path inside it", p)
	}
	p = filepath.Clean(p)
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if reserved(part) {
			return "", fmt.Errorf("%s: names starting with %s are reserved for Quiver's own files; use another name", p, reservedPrefix)
		}
	}
	return p, nil
}

// CleanPath is cleanPath for what reaches a workspace from elsewhere
// than its tools (a sandboxed script's file calls): the same rules and
// messages.
func CleanPath(p string) (string, error) { return cleanPath(p) }

// CheckPath reports whether p is a path in a workspace that the tools
// accept as it stands: what cleanPath accepts, already clean (no "." or
// empty component, no trailing separator), and a place write_file could
// write (checkDepth). What copies workspaces in from elsewhere (an
// archive's import) checks every entry with it.
func CheckPath(p string) error {
	c, err := cleanPath(p)
	if err != nil {
		return err
	}
	if c != p {
		return fmt.Errorf("%s is not a clean path (%s)", p, c)
	}
	return checkDepth(c)
}

// checkDepth refuses a clean path inside more than maxFolderDepth
// folders: the quota accounting measures no deeper (measure), and
// list_files and search_files would not show it.
func checkDepth(p string) error {
	if n := strings.Count(filepath.ToSlash(p), "/"); n > maxFolderDepth {
		return fmt.Errorf("%s is inside %d folders; the limit is %d", p, n, maxFolderDepth)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// cleanFolder is cleanPath for an optional folder: "" and "." mean the
// workspace itself.
func cleanFolder(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	return cleanPath(p)
}

// fileKind names what a non-regular file is, for error messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// links returns fi's hard-link count, or 1 when the platform does not say.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// checkRegular refuses anything but a regular file with one link. A second
// link may be a hard link to a file outside the workspace, which would leak
// its content or let a write change it.
func checkRegular(name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is %s; only regular files can be used", name, fileKind(fi.Mode()))
	}
	if n := links(fi); n > 1 {
		return fmt.Errorf("%s has %d hard links; files with more than one link are refused", name, n)
	}
	return nil
}

// openRegular opens name for reading and returns it with its fstat info. It
// refuses anything but a regular, singly linked file. A symbolic link is
// followed only while it stays inside the workspace (the Root sees to that).
//
// Lstat/Stat come first so that a FIFO or device is refused without being
// opened; O_NONBLOCK covers one swapped in after the check, and the fstat of
// the opened file is the check that counts. O_NOFOLLOW is not passed: the
// Root already opens every component with it and resolves links itself.
func openRegular(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	fi, err := root.Lstat(name)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		fi, err = root.Stat(name)
	}
	if err != nil {
		return nil, nil, fsError(name, err)
	}
	if err := checkRegular(name, fi); err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fsError(name, err)
	}
	fi, err = f.Stat()
	if err == nil {
		err = checkRegular(name, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// dirFS is a Root as an fs.FS for fs.WalkDir, serving folders only. Unlike
// root.FS(), it opens a folder with O_DIRECTORY, so that a named pipe put in
// its place between its listing and its opening is refused; a plain open
// would block until a writer came.
type dirFS struct{ root *os.Root }

func (d dirFS) Open(name string) (fs.File, error) {
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) { return d.root.Stat(name) }

// ReadDir lists the folder name sorted by file name, as fs.ReadDir does.
func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// target is what a write would replace.
type target struct {
	name   string
	exists bool
	size   int64
	mode   fs.FileMode
}

// writeTarget checks that name may be written: it is missing, or a regular
// file with one link (a symbolic link is refused rather than replaced). A
// parent that is not a folder shows as ENOTDIR from Lstat.
func writeTarget(root *os.Root, name string) (target, error) {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return target{name: name}, nil
	case err != nil:
		return target{}, fsError(name, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return target{}, linkError(root, name)
	}
	if err := checkRegular(name, fi); err != nil {
		return target{}, err
	}
	return target{name: name, exists: true, size: fi.Size(), mode: fi.Mode().Perm()}, nil
}

// linkError refuses to change a symbolic link by name (a rename would
// replace the link, not its target). It names the target only when it stays
// inside: an outside target may reveal host paths.
func linkError(root *os.Root, name string) error {
	if _, err := root.Stat(name); escapes(err) {
		return fsError(name, err)
	}
	dest, err := root.Readlink(name)
	if err != nil || filepath.IsAbs(dest) {
		return fmt.Errorf("%s is a symbolic link; change the file it points to instead", name)
	}
	return fmt.Errorf("%s is a symbolic link to %s; change the file it points to instead", name, dest)
}

// fsError turns an error from the Root into a one-line message for the
// model, or into an infrastructure error when the fault is the server's.
func fsError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist; list_files shows what does", name)
	case escapes(err):
		return fmt.Errorf("%s leads outside the workspace (through .. or a symbolic link)", name)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("a parent folder of %s is a file", name)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%s is a folder", name)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%s: too many levels of symbolic links", name)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%s: a name in the path is too long", name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", name)
	}
	return tool.Infra(fmt.Errorf("workspace: %s: %w", name, err))
}

// escapes reports whether err is the Root's refusal of a path that leaves
// it. package os does not export that error, so its text is compared.
func escapes(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err != nil && err.Error() == "path escapes from parent"
}
