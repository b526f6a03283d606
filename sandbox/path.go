package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// MaxPathBytes bounds a path a script passes to the workspace, as the
// workspace tools bound the model's.
const MaxPathBytes = 1024

// reservedPrefix starts the names Quiver keeps in a workspace for itself
// (builtin/workspace's lock and temporary files); a script may not name them.
const reservedPrefix = ".quiver-"

// CheckPath returns the file path p cleaned, or why a script may not use
// it: empty, too long, a control character (NUL included), absolute, a
// ".." that leads outside the workspace, or a name Quiver reserves. These
// are the workspace tools' rules (builtin/workspace's cleanPath); checking
// them before the [Workspace] is called means a script cannot even probe
// what lies outside. The messages are written for the model.
func CheckPath(p string) (string, error) {
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
		if strings.HasPrefix(part, reservedPrefix) {
			return "", fmt.Errorf("%s: names starting with %s are reserved for Quiver's own files; use another name", p, reservedPrefix)
		}
	}
	return p, nil
}

// CheckFolder is CheckPath for a folder to list: "", "." and "./" mean
// the workspace itself, returned as ".".
func CheckFolder(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	return CheckPath(p)
}

// isControl is the workspace tools' control character: C0 and DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
