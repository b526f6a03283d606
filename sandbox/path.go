package sandbox

import "github.com/quiverhq/quiver/builtin/workspace"

// MaxPathBytes bounds a path a script passes to the workspace: the
// workspace tools' bound on the model's.
const MaxPathBytes = workspace.MaxPathBytes

// CheckPath returns the file path p cleaned, or why a script may not use
// it: empty, longer than MaxPathBytes, a control character (NUL
// included), absolute, a ".." that leads outside the workspace, or a name
// Quiver reserves. These are the workspace tools' own rules
// (workspace.CleanPath); checking them before the [Workspace] is called
// means a script cannot even probe what lies outside. The messages are
// written for the model.
func CheckPath(p string) (string, error) { return workspace.CleanPath(p) }

// CheckFolder is CheckPath for a folder to list: "", "." and "./" mean
// the workspace itself, returned as ".".
func CheckFolder(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	return CheckPath(p)
}
