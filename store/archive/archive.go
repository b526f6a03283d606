// Package archive writes a whole Quiver deployment to one file and reads
// it back into another, from either store backend into either: what
// `quiver export` and `quiver import` run to move a deployment from SQLite
// to PostgreSQL (and back), or to back one up and restore it.
//
// An archive is one tar stream, gzip-compressed or not, holding in order:
//
//   - manifest.json: the Manifest (format version, Quiver's version, the
//     source backend, the schema versions the exporting build knew, the
//     rows of each table, the workspace files, the time it was made);
//   - tables/<table>.jsonl for every table of store.ArchiveTables, in
//     that order: one JSON object per row, the column names as keys (see
//     rows.go for each kind's encoding: bytes as base64, times RFC 3339 in
//     UTC with nanoseconds, NULL as null);
//   - workspaces/<org>/<user>/...: the data folder's workspaces, folders
//     and regular files only, with their mode and modification time.
//
// Everything an import reads is bounded (MaxManifestBytes, MaxLineBytes,
// Limits) and checked before anything is written: an import reads the
// whole archive once to validate it, then writes the workspaces into a
// staging folder, then the tables in one transaction, and only after the
// commit moves the workspaces into place.
package archive

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/store"
)

// FormatVersion is the archive format this build writes, and the only one
// it reads.
const FormatVersion = 1

// Caps on what an import reads from the file, which may come from
// anywhere.
const (
	// MaxManifestBytes bounds manifest.json.
	MaxManifestBytes = 1 << 20
	// MaxLineBytes bounds one row's line: the largest legal row is a blob
	// of store.MaxBlobBytes, a third larger in base64, plus its other
	// columns. An export refuses a row past it too, so every archive it
	// writes imports.
	MaxLineBytes = (store.MaxBlobBytes+2)/3*4 + 1<<20
	// DefaultMaxEntries is Limits.MaxEntries' default: entries (files,
	// folders, tables) in one archive.
	DefaultMaxEntries = 1 << 22
	// DefaultMaxBytes is Limits.MaxBytes' default: 256 GiB unpacked.
	DefaultMaxBytes = 256 << 30
)

// Names inside the archive.
const (
	manifestName  = "manifest.json"
	tablesDir     = "tables/"
	tableExt      = ".jsonl"
	workspacesDir = "workspaces/"
)

// Limits bound an archive's workspaces and entries, on export and on
// import alike. The zero value of each means its default: the workspace
// tools' quotas (workspace.DefaultMaxFileBytes, …) and DefaultMaxEntries.
type Limits struct {
	// MaxEntries caps the archive's entries.
	MaxEntries int
	// MaxFileBytes caps one workspace file.
	MaxFileBytes int64
	// MaxWorkspaceBytes caps the regular files of one workspace.
	MaxWorkspaceBytes int64
	// MaxFiles caps the files of one workspace, and separately its
	// folders.
	MaxFiles int
	// MaxBytes caps an import's entries together, as their headers size
	// them (what reading them unpacks, however well the file compresses);
	// 0 means DefaultMaxBytes.
	MaxBytes int64
}

// withDefaults is l with each zero limit at its default.
func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = workspace.DefaultMaxFileBytes
	}
	if l.MaxWorkspaceBytes <= 0 {
		l.MaxWorkspaceBytes = workspace.DefaultMaxWorkspaceBytes
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = workspace.DefaultMaxFiles
	}
	return l
}

// Manifest describes an archive; it is its first entry.
type Manifest struct {
	// Format is the archive format (FormatVersion).
	Format int `json:"format"`
	// Quiver is the version of the build that wrote it.
	Quiver string `json:"quiver"`
	// Backend is the store it was exported from: "sqlite" or "postgres".
	Backend string `json:"backend"`
	// Schema is the schema version of each backend that the exporting
	// build knew; its rows have the columns of those versions. An import
	// refuses an archive of a schema newer than it knows.
	Schema map[string]int `json:"schema"`
	// CreatedAt is when the export began, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Tables is how many rows each table holds.
	Tables map[string]int64 `json:"tables"`
	// Skipped are the tables an archive does not carry, with why
	// (store.SkippedTables).
	Skipped map[string]string `json:"skipped"`
	// Workspaces counts the workspace entries.
	Workspaces Files `json:"workspaces"`
}

// Files counts workspace entries.
type Files struct {
	Files   int64 `json:"files"`
	Folders int64 `json:"folders"`
	Bytes   int64 `json:"bytes"`
}

// SkippedFile is a workspace entry an export left out, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// maxSkippedShown bounds the skipped workspace entries a Summary lists;
// SkippedFiles counts them all.
const maxSkippedShown = 100

// Summary is what an export or an import did, as the commands print it.
type Summary struct {
	// Op is "export" or "import".
	Op string `json:"op"`
	// File is the archive's path; Store names the store it was exported
	// from or imported into (backend.Config.String, password hidden).
	File  string `json:"file"`
	Store string `json:"store"`
	// Manifest is the archive's.
	Manifest Manifest `json:"manifest"`
	// Skipped are workspace entries an export left out (symbolic links,
	// devices, files with several links, names no workspace may hold), at
	// most maxSkippedShown of SkippedFiles.
	Skipped      []SkippedFile `json:"skipped_files,omitempty"`
	SkippedFiles int           `json:"skipped_file_count,omitempty"`
	// Repeated counts, by table, the rows an import left out because they
	// repeat the key of an earlier row, which the archive's older schema
	// allowed and the current one does not (store.ArchiveUnique: the
	// first is kept, as the migration that added the key keeps it).
	Repeated map[string]int64 `json:"repeated_rows,omitempty"`
}

// WriteText writes the summary for people.
func (s Summary) WriteText(w io.Writer) {
	m := s.Manifest
	verb, dir := "exported", "to"
	if s.Op == "import" {
		verb, dir = "imported", "into"
	}
	if s.Op == "import" {
		fmt.Fprintf(w, "%s %s %s %s\n", verb, s.File, dir, s.Store)
	} else {
		fmt.Fprintf(w, "%s %s %s %s\n", verb, s.Store, dir, s.File)
	}
	var rows int64
	var parts []string
	for _, t := range store.ArchiveTables() {
		rows += m.Tables[t.Name]
		parts = append(parts, fmt.Sprintf("%s %d", t.Name, m.Tables[t.Name]))
	}
	fmt.Fprintf(w, "rows: %d (%s)\n", rows, strings.Join(parts, ", "))
	fmt.Fprintf(w, "workspaces: %d files, %d folders, %d bytes\n", m.Workspaces.Files, m.Workspaces.Folders, m.Workspaces.Bytes)
	for _, name := range sortedKeys(m.Skipped) {
		fmt.Fprintf(w, "not copied: %s (%s)\n", name, m.Skipped[name])
	}
	for _, name := range sortedKeys(s.Repeated) {
		fmt.Fprintf(w, "left out: %d %s rows repeating an earlier row's key (the archive's schema predates the key; the first is kept)\n", s.Repeated[name], name)
	}
	for _, f := range s.Skipped {
		fmt.Fprintf(w, "skipped in workspaces: %s (%s)\n", f.Path, f.Reason)
	}
	if more := s.SkippedFiles - len(s.Skipped); more > 0 {
		fmt.Fprintf(w, "skipped in workspaces: %d more\n", more)
	}
}
