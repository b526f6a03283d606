package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/keyring"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
)

// Options say where an export reads or an import writes, and how.
type Options struct {
	// Place is the store exported from or imported into, and the data
	// folder whose workspaces go with it (Place.Dir/workspaces).
	Place backend.Config
	// Keyring loads the deployment's keyring (nil when none is
	// configured), before anything is opened; nil means none. An export
	// opens the store under keyring.Check, as every command does; an
	// import requires the keyring to open the archive's keyring check
	// (keyring.CheckSealed), since sealed secrets are copied as they are.
	Keyring func() (*secret.Keyring, error)
	// Quiver is this build's version and Now the time the export begins,
	// for the manifest.
	Quiver string
	Now    time.Time
	// Gzip compresses an exported archive (an import tells by the
	// content).
	Gzip bool
	// TempDir holds an export's tables while each is measured for its
	// tar entry; "" means beside the archive (ExportFile) or os.TempDir.
	TempDir string
	// Limits bound the workspaces and entries. An export refuses what an
	// import would, so that every archive it writes imports.
	Limits Limits
}

// keyring loads o's keyring.
func (o Options) keyring() (*secret.Keyring, error) {
	if o.Keyring == nil {
		return nil, nil
	}
	return o.Keyring()
}

// ExportFile exports the store at o.Place, opened as every command opens
// it (a missing SQLite database is not created), to a new file at path,
// gzip-compressed when o.Gzip or the name ends in .gz or .tgz. A path
// that exists is refused. The archive is written to a temporary file
// beside it and renamed into place once complete, so a failed export
// leaves nothing.
func ExportFile(ctx context.Context, path string, o Options) (Summary, error) {
	sum, err := exportFile(ctx, path, o)
	if err != nil {
		return Summary{}, fmt.Errorf("export: %w", err)
	}
	return sum, nil
}

func exportFile(ctx context.Context, path string, o Options) (Summary, error) {
	if _, err := os.Lstat(path); err == nil {
		return Summary{}, fmt.Errorf("%s already exists; give a new file", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Summary{}, err
	}
	st, err := openSource(ctx, o)
	if err != nil {
		return Summary{}, err
	}
	defer st.Close()
	o.Gzip = o.Gzip || strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".tgz")
	if o.TempDir == "" {
		o.TempDir = filepath.Dir(path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".quiver-export-*")
	if err != nil {
		return Summary{}, err
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	sum, err := Export(ctx, f, st, o)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// A link, not a rename: it fails when path has been created
		// since the check above, so an export never replaces a file.
		if err = os.Link(f.Name(), path); errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%s already exists; give a new file", path)
		}
	}
	sum.File = path
	return sum, err
}

// openSource opens the store to export, under the keyring check.
func openSource(ctx context.Context, o Options) (store.Store, error) {
	if ok, why := backend.Exists(o.Place); !ok {
		return nil, errors.New(why)
	}
	kr, err := o.keyring()
	if err != nil {
		return nil, err
	}
	st, err := backend.Open(ctx, o.Place)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := keyring.Check(ctx, st, kr); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// Export writes the archive of st, the store at o.Place, to w: the
// manifest, every table from one snapshot of the store, then the
// workspaces. A workspace over a quota of o.Limits is refused before
// anything is written; symbolic links, devices, files with several links
// and names no workspace may hold are left out and listed in the
// Summary, never followed.
func Export(ctx context.Context, w io.Writer, st store.Archiver, o Options) (Summary, error) {
	lim := o.Limits.withDefaults()
	files, skipped, err := listWorkspaces(filepath.Join(o.Place.Dir, workspace.FolderName), lim)
	if err != nil {
		return Summary{}, err
	}
	tables := store.ArchiveTables()
	if n := 1 + len(tables) + len(files); n > lim.MaxEntries {
		return Summary{}, fmt.Errorf("%d entries; an archive holds at most %d", n, lim.MaxEntries)
	}
	out := w
	var gz *gzip.Writer
	if o.Gzip {
		gz = gzip.NewWriter(w)
		out = gz
	}
	tw := tar.NewWriter(out)
	m := Manifest{Format: FormatVersion, Quiver: o.Quiver, Backend: o.Place.Name(), Schema: backend.KnownSchemas(),
		CreatedAt: o.Now.UTC(), Tables: map[string]int64{}, Skipped: store.SkippedTables(), Workspaces: countFiles(files)}
	err = st.ExportTables(ctx, func(snap store.TableSnapshot) error {
		return writeTables(ctx, tw, snap, &m, tables, o.TempDir)
	})
	if err == nil {
		err = writeWorkspaces(tw, filepath.Join(o.Place.Dir, workspace.FolderName), files)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil && gz != nil {
		err = gz.Close()
	}
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Op: "export", Store: o.Place.String(), Manifest: m, SkippedFiles: len(skipped)}
	sum.Skipped = skipped[:min(len(skipped), maxSkippedShown)]
	return sum, nil
}

// writeTables counts every table, writes the manifest, then each table's
// rows, all from snap.
func writeTables(ctx context.Context, tw *tar.Writer, snap store.TableSnapshot, m *Manifest, tables []store.ArchiveTable, tempDir string) error {
	for _, t := range tables {
		n, err := snap.Count(ctx, t)
		if err != nil {
			return err
		}
		m.Tables[t.Name] = n
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeEntry(tw, manifestName, int64(len(b)+1), m.CreatedAt, bytes.NewReader(append(b, '\n'))); err != nil {
		return err
	}
	for _, t := range tables {
		if err := writeTable(ctx, tw, snap, t, m.Tables[t.Name], m.CreatedAt, tempDir); err != nil {
			return err
		}
	}
	return nil
}

// writeTable spools t's rows (a tar entry needs its size first) and writes
// them as tables/<name>.jsonl; want is the count the manifest holds.
func writeTable(ctx context.Context, tw *tar.Writer, snap store.TableSnapshot, t store.ArchiveTable, want int64, at time.Time, tempDir string) error {
	sp := &spool{dir: tempDir}
	defer sp.close()
	var rows int64
	var line bytes.Buffer
	err := snap.Rows(ctx, t, func(row []any) error {
		line.Reset()
		if err := encodeRow(&line, t, row); err != nil {
			return err
		}
		rows++
		_, err := sp.Write(line.Bytes())
		return err
	})
	if err != nil {
		return err
	}
	if rows != want {
		return fmt.Errorf("table %s: %d rows read, %d counted in the same snapshot", t.Name, rows, want)
	}
	r, err := sp.reader()
	if err != nil {
		return err
	}
	return writeEntry(tw, tablesDir+t.Name+tableExt, sp.n, at, r)
}

// writeEntry writes one regular file entry of size bytes from r.
func writeEntry(tw *tar.Writer, name string, size int64, at time.Time, r io.Reader) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: at, Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := io.CopyN(tw, r, size); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// spoolMemory is how much of a table a spool keeps in memory before it
// moves to a temporary file.
const spoolMemory = 8 << 20

// spool holds a table's lines until they are counted: in memory while
// small, then in a temporary file in dir ("" is os.TempDir), removed by
// close.
type spool struct {
	dir string
	buf bytes.Buffer
	f   *os.File
	n   int64
}

// Write appends p.
func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil && s.buf.Len()+len(p) > spoolMemory {
		f, err := os.CreateTemp(s.dir, ".quiver-export-table-*")
		if err != nil {
			return 0, err
		}
		s.f = f
		if _, err := s.buf.WriteTo(f); err != nil {
			return 0, err
		}
	}
	s.n += int64(len(p))
	if s.f != nil {
		return s.f.Write(p)
	}
	return s.buf.Write(p)
}

// reader returns the spooled bytes from the start.
func (s *spool) reader() (io.Reader, error) {
	if s.f == nil {
		return &s.buf, nil
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.f, nil
}

// close removes the temporary file, if any.
func (s *spool) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}
