package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/quiverhq/quiver/tool"
)

// ErrNoFile reports that a person's workspace holds no regular file at
// the path asked for (or none readable by its rules).
var ErrNoFile = errors.New("workspace: no such file")

// ReadPersonFile returns the file at p in the workspace of user userID of
// organisation orgID under root, for a surface that shows a signed-in
// person their own files (the web chat shows a chart run_code saved). The
// caller passes the ids of the person it authenticated, never ids from a
// request body. The tools' path rules apply (CleanPath; nothing outside
// the folder, no link followed out of it, regular files only) and a file
// over the default per-file quota is refused. A workspace that does not
// exist is not created: the file is ErrNoFile.
func ReadPersonFile(ctx context.Context, root, orgID, userID, p string) ([]byte, error) {
	if err := checkSegment("OrgID", orgID); err != nil {
		return nil, err
	}
	if err := checkSegment("UserID", userID); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path.Join(root, orgID, userID)); errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoFile
	}
	c, err := Open(ctx, Config{Root: root}, tool.Scope{OrgID: orgID, UserID: userID})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	name, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	for _, part := range strings.Split(name, "/") {
		if reserved(part) {
			return nil, ErrNoFile
		}
	}
	if fi, err := c.root.Stat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, ErrNoFile
	}
	return c.ReadFile(name)
}
