package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/keyring"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
)

// ImportFile imports the archive at path into o.Place: it reads the
// whole archive once to validate it (the manifest first: a format this
// build does not read, or a schema newer than it knows, is refused),
// requires o.Keyring to open the archive's keyring check, opens the
// target and refuses one that holds any row (store.ErrNotEmpty) or any
// workspace; then it writes the workspaces into a staging folder, the
// tables in one transaction, and after the commit moves the workspaces
// into place. A refusal or failure before the commit leaves the target
// as it was, but for the schema that opening it migrates.
func ImportFile(ctx context.Context, path string, o Options) (Summary, error) {
	sum, err := importFile(ctx, path, o)
	if err != nil {
		return Summary{}, fmt.Errorf("import %s: %w", path, err)
	}
	return sum, nil
}

func importFile(ctx context.Context, path string, o Options) (Summary, error) {
	lim := o.Limits.withDefaults()
	v, err := validate(path, lim)
	if err != nil {
		return Summary{}, err
	}
	kr, err := o.keyring()
	if err != nil {
		return Summary{}, err
	}
	if err := keyring.CheckSealed(kr, v.keyCheck); err != nil {
		return Summary{}, err
	}
	wsDir := filepath.Join(o.Place.Dir, workspace.FolderName)
	if err := checkNoWorkspaces(wsDir); err != nil {
		return Summary{}, err
	}
	st, err := backend.Open(ctx, o.Place)
	if err != nil {
		return Summary{}, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	if err := st.CheckEmpty(ctx); err != nil {
		return Summary{}, err
	}
	var stage *staging
	if v.manifest.Workspaces != (Files{}) {
		if stage, err = stageWorkspaces(path, wsDir, v, lim); err != nil {
			return Summary{}, err
		}
		defer stage.remove()
	}
	if err := importTables(ctx, st, path, v, lim); err != nil {
		return Summary{}, err
	}
	if stage != nil {
		if err := stage.place(); err != nil {
			// The tables are committed: what did not move stays in the
			// staging folder, named in err, for the operator to move.
			stage.keep = true
			return Summary{}, err
		}
	}
	return Summary{Op: "import", File: path, Store: o.Place.String(), Manifest: v.manifest, Repeated: v.repeated}, nil
}

// validated is what the validating pass learnt.
type validated struct {
	manifest Manifest
	// raw is the manifest's bytes: each later pass requires the same, so
	// an archive replaced between the passes is refused.
	raw      []byte
	keyCheck string
	// repeated counts, by table, the rows left out for repeating a key
	// their source schema did not enforce (store.ArchiveUnique).
	repeated map[string]int64
}

// validate reads the whole archive and checks everything an import will
// write: the manifest, every row, every workspace entry against the
// quotas, and the counts against the manifest.
func validate(path string, lim Limits) (validated, error) {
	a, err := openArchive(path, lim)
	if err != nil {
		return validated{}, err
	}
	defer a.close()
	var v validated
	if v.manifest, v.raw, err = a.readManifest(); err != nil {
		return validated{}, err
	}
	tr := newTableReader(a, v.manifest)
	if err := drain(tr); err != nil {
		return validated{}, err
	}
	v.keyCheck, v.repeated = tr.keyCheck, tr.dropped
	q := quotas{lim: lim, used: map[string]*used{}}
	var n Files
	err = a.eachWorkspaceEntry(tr.pending, func(e fileEntry) error {
		n = n.add(e)
		return q.add(e)
	})
	if err != nil {
		return validated{}, err
	}
	if n != v.manifest.Workspaces {
		return validated{}, fmt.Errorf("the workspaces hold %+v, the manifest says %+v: the archive is truncated or altered", n, v.manifest.Workspaces)
	}
	return v, nil
}

// drain reads every table and row of r.
func drain(r store.TableReader) error {
	for {
		if _, err := r.NextTable(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		for {
			if _, err := r.NextRow(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return err
			}
		}
	}
}

// importTables reads the archive's tables into st in one transaction.
func importTables(ctx context.Context, st store.Archiver, path string, v validated, lim Limits) error {
	a, err := openArchive(path, lim)
	if err != nil {
		return err
	}
	defer a.close()
	if err := a.sameManifest(v); err != nil {
		return err
	}
	tr := newTableReader(a, v.manifest)
	return st.ImportTables(ctx, sameKeyCheck{TableReader: tr, got: func() string { return tr.keyCheck }, want: v.keyCheck})
}

// sameKeyCheck ends the tables with an error, instead of io.EOF, when the
// key check they held (got, once read) is not the one the validating pass
// checked the keyring against (want): an archive altered between the
// passes is refused before its rows commit, not imported with secrets
// the keyring cannot open.
type sameKeyCheck struct {
	store.TableReader
	got  func() string
	want string
}

// NextTable implements store.TableReader.
func (r sameKeyCheck) NextTable() (store.ArchiveTable, error) {
	t, err := r.TableReader.NextTable()
	if errors.Is(err, io.EOF) && r.got() != r.want {
		return t, errors.New("the archive changed while it was imported: its key check is not the one checked")
	}
	return t, err
}

// checkNoWorkspaces requires the workspaces folder dir to be missing or
// empty.
func checkNoWorkspaces(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("workspaces: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty; import only into a new deployment", dir)
	}
	return nil
}

// staging is the folder that receives an archive's workspaces before the
// tables commit: a reserved name inside the workspaces folder (the tools
// never show it), so that moving each organisation into place is a
// rename within one folder.
type staging struct {
	ws   *os.Root // the workspaces folder
	name string   // the staging folder in it
	// keep leaves the staging folder in place (see remove).
	keep bool
}

// stageWorkspaces writes the archive's workspaces into a new staging
// folder in the workspaces folder dir, creating dir (0700) when missing.
func stageWorkspaces(path, dir string, v validated, lim Limits) (*staging, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	ws, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	s := &staging{ws: ws, name: workspace.ReservedPrefix + "import-" + strings.ToLower(rand.Text()[:12])}
	if err := ws.Mkdir(s.name, 0o700); err != nil {
		ws.Close()
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	if err := s.fill(path, v, lim); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// fill extracts the archive's workspace entries into the staging folder.
func (s *staging) fill(path string, v validated, lim Limits) error {
	stage, err := s.ws.OpenRoot(s.name)
	if err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	defer stage.Close()
	a, err := openArchive(path, lim)
	if err != nil {
		return err
	}
	defer a.close()
	if err := a.sameManifest(v); err != nil {
		return err
	}
	first, err := a.skipTables()
	if err != nil {
		return err
	}
	x := &extractor{stage: stage}
	q := quotas{lim: lim, used: map[string]*used{}}
	err = a.eachWorkspaceEntry(first, func(e fileEntry) error {
		if err := q.add(e); err != nil {
			return err
		}
		return x.add(e, a.tr)
	})
	if err != nil {
		return err
	}
	return x.finish()
}

// place moves each organisation's folder from the staging folder into the
// workspaces folder.
func (s *staging) place() error {
	orgs, err := fs.ReadDir(s.ws.FS(), s.name)
	if err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	for _, org := range orgs {
		if err := s.ws.Rename(s.name+"/"+org.Name(), org.Name()); err != nil {
			return fmt.Errorf("workspaces: move %s into place (the rest stays in %s): %w", org.Name(), s.name, err)
		}
	}
	return nil
}

// remove deletes what is left of the staging folder, unless keep says it
// holds workspaces an import committed but could not move into place.
func (s *staging) remove() {
	if !s.keep {
		s.ws.RemoveAll(s.name)
	}
	s.ws.Close()
}

// archiveFile reads the entries of an archive file, gzip-compressed or
// not (told by its first bytes), counting them against a cap.
type archiveFile struct {
	f   *os.File
	gz  *gzip.Reader
	tr  *tar.Reader
	n   int
	max int
	// bytes sums the entries' sizes so far, at most maxBytes.
	bytes, maxBytes int64
}

// openArchive opens the archive at path.
func openArchive(path string, lim Limits) (*archiveFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	a := &archiveFile{f: f, max: lim.MaxEntries, maxBytes: lim.MaxBytes}
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		if a.gz, err = gzip.NewReader(br); err != nil {
			f.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		r = a.gz
	}
	a.tr = tar.NewReader(r)
	return a, nil
}

// close closes the file.
func (a *archiveFile) close() {
	if a.gz != nil {
		a.gz.Close()
	}
	a.f.Close()
}

// next returns the next entry's header, io.EOF after the last, or an
// error past the cap on entries or on their bytes together.
func (a *archiveFile) next() (*tar.Header, error) {
	h, err := a.tr.Next()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("read the archive: %w", err)
	}
	if a.n++; a.n > a.max {
		return nil, fmt.Errorf("more than %d entries; an archive holds at most %d", a.max, a.max)
	}
	if a.bytes += max(h.Size, 0); a.bytes > a.maxBytes {
		return nil, fmt.Errorf("more than %d bytes unpacked; an import reads at most %d", a.maxBytes, a.maxBytes)
	}
	return h, nil
}

// readManifest reads and checks the first entry, the manifest.
func (a *archiveFile) readManifest() (Manifest, []byte, error) {
	h, err := a.next()
	if errors.Is(err, io.EOF) {
		return Manifest{}, nil, errors.New("an empty archive: no manifest")
	}
	if err != nil {
		return Manifest{}, nil, err
	}
	if h.Name != manifestName || h.Typeflag != tar.TypeReg {
		return Manifest{}, nil, fmt.Errorf("the first entry is %q, not %s: not a Quiver archive", h.Name, manifestName)
	}
	if h.Size > MaxManifestBytes {
		return Manifest{}, nil, fmt.Errorf("%s is %d bytes; the limit is %d", manifestName, h.Size, MaxManifestBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(a.tr, MaxManifestBytes+1))
	if err != nil {
		return Manifest{}, nil, fmt.Errorf("read %s: %w", manifestName, err)
	}
	if len(raw) > MaxManifestBytes {
		return Manifest{}, nil, fmt.Errorf("%s is over %d bytes", manifestName, MaxManifestBytes)
	}
	m, err := parseManifest(raw)
	return m, raw, err
}

// sameManifest reads the manifest again and requires the bytes the
// validating pass read.
func (a *archiveFile) sameManifest(v validated) error {
	_, raw, err := a.readManifest()
	if err != nil {
		return err
	}
	if !bytes.Equal(raw, v.raw) {
		return errors.New("the archive changed while it was imported")
	}
	return nil
}

// skipTables passes over the tables and returns the first entry after
// them (nil at the end).
func (a *archiveFile) skipTables() (*tar.Header, error) {
	for {
		h, err := a.next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil || !strings.HasPrefix(h.Name, tablesDir) {
			return h, err
		}
	}
}

// eachWorkspaceEntry calls fn with each workspace entry from h (the first
// entry after the tables; nil for none) to the end, each checked
// (checkHeader); anything else after the tables refuses the archive.
func (a *archiveFile) eachWorkspaceEntry(h *tar.Header, fn func(fileEntry) error) error {
	for h != nil {
		if !strings.HasPrefix(h.Name, workspacesDir) {
			return fmt.Errorf("unexpected entry %q after the tables", h.Name)
		}
		e, err := checkHeader(h)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		if h, err = a.next(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// parseManifest decodes a manifest and refuses one this build cannot
// import: another format version, a schema newer than it knows, a backend
// or table it does not know.
func parseManifest(raw []byte) (Manifest, error) {
	var head struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", manifestName, err)
	}
	if head.Format != FormatVersion {
		return Manifest{}, fmt.Errorf("archive format %d; this build of quiver reads format %d only (an archive of a newer build needs that build)", head.Format, FormatVersion)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", manifestName, err)
	}
	return m, checkManifest(m)
}

// checkManifest checks a decoded manifest of this format.
func checkManifest(m Manifest) error {
	known := backend.KnownSchemas()
	if _, ok := known[m.Backend]; !ok {
		return fmt.Errorf("%s: unknown source backend %q", manifestName, m.Backend)
	}
	for _, name := range sortedKeys(m.Schema) {
		k, ok := known[name]
		switch {
		case !ok:
			return fmt.Errorf("%s: a schema of unknown backend %q", manifestName, name)
		case m.Schema[name] > k:
			return fmt.Errorf("the archive's %s schema is at migration %d, newer than this build knows (%d): %w; import it with a build at least as new as the one that exported it",
				name, m.Schema[name], k, store.ErrSchemaTooNew)
		}
	}
	if _, ok := m.Schema[m.Backend]; !ok {
		return fmt.Errorf("%s: no schema version for %s", manifestName, m.Backend)
	}
	tables := store.ArchiveTables()
	for name, n := range m.Tables {
		if !slices.ContainsFunc(tables, func(t store.ArchiveTable) bool { return t.Name == name }) {
			return fmt.Errorf("%s: unknown table %q", manifestName, name)
		}
		if n < 0 {
			return fmt.Errorf("%s: table %s: %d rows", manifestName, name, n)
		}
	}
	if w := m.Workspaces; w.Files < 0 || w.Folders < 0 || w.Bytes < 0 {
		return fmt.Errorf("%s: negative workspace counts", manifestName)
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
