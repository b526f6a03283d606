// Package workspace provides the six file tools present in every turn:
// list_files, search_files and read_file, which only read, and write_file,
// edit_file and delete_file, which change files.
//
// Each user has one workspace per organisation, a folder at
// Config.Root/<OrgID>/<UserID> taken from the turn's Scope. Every call opens
// it afresh with [os.OpenRoot], so no path the model writes can reach outside
// it: paths are checked with [filepath.IsLocal] first, the Root refuses any
// step (.. or a symbolic link) that leaves the folder, and only regular files
// with a single link are read or written.
//
// Several processes (replicas sharing one data folder) may serve the same
// workspaces: every write holds the workspace's lock, an flock on its
// .quiver-lock file, while it checks the quotas and changes files, and
// every write replaces a file by an atomic rename, so reads need no lock.
// The quotas are checked against a ledger of the workspace's usage kept in
// that lock file (usage.go), so a write costs the same whatever the
// workspace holds.
// Names starting with ".quiver-" are Quiver's own: refused as paths, left
// out of lists and searches.
package workspace

import (
	_ "embed"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/quiverhq/quiver/tool"
)

// Family is the tool family every workspace tool belongs to.
const Family = "workspace"

// rules is the prompt fragment all six tools carry (a turn gets it once):
// what the workspace is for, and what not to do with it.
//
//go:embed rules.md
var rules string

// Defaults used for the zero values of Config's limits.
const (
	DefaultMaxFileBytes      = 1 << 20   // 1 MiB
	DefaultMaxWorkspaceBytes = 100 << 20 // 100 MiB
	DefaultMaxFiles          = 10_000
)

// Limits the tools enforce whatever the Config says. They bound what one
// call can put in front of the model.
const (
	maxOutputChars = 20_000 // text one call returns
	maxListEntries = 500    // entries list_files shows
	maxListScan    = 5_000  // names list_files reads from folders
	maxSearchLines = 100    // matching lines search_files shows
	maxQueries     = 5      // search strings in one search_files call
	maxContext     = 3      // context lines each side of a match
	maxWriteFiles  = 3      // files in one write_file call
	maxRewriteLen  = 3_000  // characters of an existing file write_file may replace
	maxLineChars   = 300    // characters of one line search_files shows
	maxDepth       = 64     // folder levels search_files and list_files go down
	// maxFolderDepth is how many folders a path write_file writes (or an
	// archive imports) may be inside, and so how deep the quota
	// accounting's measure goes: it holds a descriptor per level.
	maxFolderDepth = maxDepth
	binaryProbe    = 8 << 10
)

// FolderName is the data folder's subfolder that holds every workspace
// (DATA/workspaces/<org>/<user>), the Root a deployment configures.
const FolderName = "workspaces"

// Config says where workspaces live and how much each may hold. The zero
// value of each limit means its default.
type Config struct {
	// Root is the host folder holding every workspace; it is created (0700)
	// when missing. A workspace lives at Root/<OrgID>/<UserID> and is created
	// (0700) on first use. Root must not be empty.
	Root string
	// MaxFileBytes caps the size of one file written or edited, and of the
	// files search_files looks into. Zero means 1 MiB.
	MaxFileBytes int64
	// MaxWorkspaceBytes caps the total size of the regular files in one
	// workspace. Zero means 100 MiB.
	MaxWorkspaceBytes int64
	// MaxFiles caps the number of files (anything but a folder) in one
	// workspace, and separately the number of folders: a write that would
	// create folders past it is refused. Zero means 10,000.
	MaxFiles int
}

// withDefaults returns c with every zero limit replaced by its default.
func (c Config) withDefaults() Config {
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.MaxWorkspaceBytes <= 0 {
		c.MaxWorkspaceBytes = DefaultMaxWorkspaceBytes
	}
	if c.MaxFiles <= 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	return c
}

// Tools returns the workspace tools in a fixed order: list_files,
// search_files, read_file (tool.Read), then write_file, edit_file and
// delete_file (tool.Write). All are in family "workspace" and always on. The
// tools share no mutable state and are safe for concurrent use, also with
// other processes writing the same Root (see lock.go): the writes to one
// workspace are serialised by a lock file in it, so a quota holds exactly
// however many writers there are. Tools panics when cfg.Root is empty.
func Tools(cfg Config) []*tool.Tool {
	if cfg.Root == "" {
		panic("workspace: Config.Root is empty")
	}
	ws := &workspaces{cfg: cfg.withDefaults()}
	return []*tool.Tool{
		ws.listTool(),
		ws.searchTool(),
		ws.readTool(),
		ws.writeTool(),
		ws.editTool(),
		ws.deleteTool(),
	}
}

// workspaces opens the workspace of a call's scope.
type workspaces struct {
	cfg Config
	// Test hooks, nil in production. contended runs each time a write
	// finds the workspace's lock held by another writer; checked runs
	// once a write has passed its quota check, with the lock held, before
	// it changes anything; visited runs for each name a walk of the quota
	// accounting (measure) or of list_files reads from a folder.
	contended, checked, visited func()
}

// spec fills the fields every workspace tool shares.
func spec(name, desc string, access tool.Access, limits ...tool.Limit) tool.Spec {
	return tool.Spec{
		Name:        name,
		Family:      Family,
		Macros:      []string{name + "_tool"},
		Description: strings.TrimSpace(desc),
		Access:      access,
		AlwaysOn:    true,
		Fragments:   []string{strings.TrimSpace(rules)},
		Limits:      limits,
	}
}

// quotaLimits lists the configured quotas for the write tools' specs.
func (w *workspaces) quotaLimits() []tool.Limit {
	return []tool.Limit{
		{Name: "max_file_bytes", Value: int(w.cfg.MaxFileBytes)},
		{Name: "max_workspace_bytes", Value: int(w.cfg.MaxWorkspaceBytes)},
		{Name: "max_files", Value: w.cfg.MaxFiles},
	}
}

// open opens the scope's workspace, creating it on first use. The caller
// closes the Root. A scope whose IDs are not single path segments is a server
// bug, reported as an infrastructure error.
func (w *workspaces) open(s tool.Scope) (*os.Root, error) {
	if err := checkSegment("OrgID", s.OrgID); err != nil {
		return nil, tool.Infra(err)
	}
	if err := checkSegment("UserID", s.UserID); err != nil {
		return nil, tool.Infra(err)
	}
	if err := os.MkdirAll(w.cfg.Root, 0o700); err != nil {
		return nil, tool.Infra(fmt.Errorf("workspace: create root: %w", err))
	}
	base, err := os.OpenRoot(w.cfg.Root)
	if err != nil {
		return nil, tool.Infra(fmt.Errorf("workspace: open root: %w", err))
	}
	defer base.Close()
	dir := path.Join(s.OrgID, s.UserID)
	if err := base.MkdirAll(dir, 0o700); err != nil {
		return nil, tool.Infra(fmt.Errorf("workspace: create %s: %w", dir, err))
	}
	root, err := base.OpenRoot(dir)
	if err != nil {
		return nil, tool.Infra(fmt.Errorf("workspace: open %s: %w", dir, err))
	}
	return root, nil
}

// checkSegment requires id to be one non-empty path segment: no separator,
// not "." or "..", no NUL.
func checkSegment(field, id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`+"\x00") {
		return fmt.Errorf("workspace: scope %s %q is not a single path segment", field, id)
	}
	return nil
}
