package archive_test

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/archive"
	"github.com/quiverhq/quiver/store/backend"
	"github.com/quiverhq/quiver/store/sqlite"
)

// writeArchive writes entries as a new plain tar and returns its path.
func writeArchive(t *testing.T, entries []entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edited.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Mode: e.Mode, ModTime: e.ModTime, Size: int64(len(e.Body)), Format: tar.FormatPAX}
		if e.Type != tar.TypeReg {
			h.Size = 0
		}
		if e.Type == tar.TypeSymlink {
			h.Linkname = "/etc/passwd"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.Body)); h.Size > 0 && err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// editManifest returns entries with the manifest changed by edit.
func editManifest(t *testing.T, entries []entry, edit func(m map[string]any)) []entry {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(entries[0].Body), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]entry(nil), entries...)
	out[0].Body = string(b)
	return out
}

// withEntry returns entries with e appended.
func withEntry(entries []entry, e entry) []entry {
	return append(append([]entry(nil), entries...), e)
}

// editTable returns entries with the body of tables/<name>.jsonl changed.
func editTable(entries []entry, name string, edit func(body string) string) []entry {
	out := append([]entry(nil), entries...)
	for i, e := range out {
		if e.Name == "tables/"+name+".jsonl" {
			out[i].Body = edit(e.Body)
		}
	}
	return out
}

// TestImportRefusals: an archive that is not what an export writes, or
// that would break a cap, is refused with a clear error before anything
// is written: not even the target's data folder is created.
func TestImportRefusals(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	good, _ := export(t, source(t, kr), kr, "good.tar")
	base := readEntries(t, good)
	file := func(name, body string) entry { return entry{Name: name, Type: tar.TypeReg, Mode: 0o600, Body: body} }
	tests := []struct {
		name    string
		entries []entry
		limits  archive.Limits
		kr      *secret.Keyring
		want    string
		is      error
	}{
		{name: "UnknownFormat", want: "archive format 2; this build of quiver reads format 1",
			entries: editManifest(t, base, func(m map[string]any) { m["format"] = 2 })},
		{name: "NewerSchema", want: "newer than this build knows", is: store.ErrSchemaTooNew,
			entries: editManifest(t, base, func(m map[string]any) {
				m["schema"].(map[string]any)["sqlite"] = sqlite.KnownVersion() + 1
			})},
		{name: "UnknownManifestField", want: `unknown field "extra"`,
			entries: editManifest(t, base, func(m map[string]any) { m["extra"] = 1 })},
		{name: "ManifestTooLarge", want: fmt.Sprintf("manifest.json is %d bytes; the limit is %d", archive.MaxManifestBytes+1, archive.MaxManifestBytes),
			entries: append([]entry{file("manifest.json", base[0].Body+strings.Repeat(" ", archive.MaxManifestBytes+1-len(base[0].Body)))}, base[1:]...)},
		{name: "NoManifest", want: "not a Quiver archive", entries: base[1:]},
		{name: "OversizedLine", want: fmt.Sprintf("table agents: a line over %d bytes", archive.MaxLineBytes),
			entries: editTable(base, "agents", func(string) string {
				return `{"org_id":"` + strings.Repeat("a", archive.MaxLineBytes) + `"}` + "\n"
			})},
		{name: "RowsMissing", want: "table messages: 3 rows, the manifest counts 5",
			entries: editTable(base, "messages", func(body string) string {
				lines := strings.SplitAfter(body, "\n")
				return strings.Join(lines[:3], "")
			})},
		{name: "TableMissing", want: "table messages: missing",
			entries: slicesDelete(base, "tables/messages.jsonl")},
		{name: "TableOutOfOrder", want: "table orgs out of order or repeated",
			entries: insertAfter(base, "tables/users.jsonl", file("tables/orgs.jsonl", ""))},
		{name: "UnknownColumn", want: `table orgs: unknown column "plan"`,
			entries: editTable(base, "orgs", func(body string) string {
				return strings.Replace(body, `"id":"acme"`, `"id":"acme","plan":"gold"`, 1)
			})},
		{name: "BadValue", want: "column seq: not an integer",
			entries: editTable(base, "messages", func(body string) string { return strings.Replace(body, `"seq":1`, `"seq":"1"`, 1) })},
		{name: "BlobSizeNotItsData", want: "table blobs: a blob's size is not its data's",
			entries: editTable(base, "blobs", func(body string) string {
				return regexp.MustCompile(`"size":\d+`).ReplaceAllString(body, `"size":999`)
			})},
		{name: "BlobDigestNotItsData", want: "table blobs: a blob's sha256 is not its data's",
			entries: editTable(base, "blobs", func(body string) string {
				return regexp.MustCompile(`"sha256":"[0-9a-f]{64}"`).ReplaceAllString(body, `"sha256":"`+strings.Repeat("0", 64)+`"`)
			})},
		{name: "NotUTF8", want: "a line that is not UTF-8",
			entries: editTable(base, "orgs", func(body string) string { return strings.Replace(body, "Acme", "Ac\xffme", 1) })},
		{name: "TraversalDotDot", want: "leads outside the workspace",
			entries: withEntry(base, file("workspaces/acme/ana/../../../../tmp/evil", "x"))},
		{name: "TraversalAbsolute", want: "not a path in the workspaces folder",
			entries: withEntry(base, file("workspaces//etc/cron.d/evil", "x"))},
		{name: "TraversalOrg", want: `".." is not a workspace folder name`,
			entries: withEntry(base, file("workspaces/../x/y", "x"))},
		{name: "Symlink", want: "hold only folders and regular files",
			entries: withEntry(base, entry{Name: "workspaces/acme/ana/link", Type: tar.TypeSymlink})},
		{name: "Device", want: "hold only folders and regular files",
			entries: withEntry(base, entry{Name: "workspaces/acme/ana/dev", Type: tar.TypeChar})},
		{name: "ReservedName", want: "reserved for Quiver's own files",
			entries: withEntry(base, file("workspaces/acme/ana/.quiver-lock", ""))},
		{name: "FileOutsideWorkspace", want: "a file outside any workspace",
			entries: withEntry(base, file("workspaces/acme/notes.txt", "x"))},
		{name: "StrayEntry", want: `unexpected entry "etc/passwd" after the tables`,
			entries: withEntry(base, file("etc/passwd", "x"))},
		{name: "WorkspacesAltered", want: "the workspaces hold",
			entries: withEntry(base, file("workspaces/acme/ana/extra.txt", "x"))},
		{name: "TooManyEntries", limits: archive.Limits{MaxEntries: 10}, want: "more than 10 entries", entries: base},
		{name: "TooManyBytes", limits: archive.Limits{MaxBytes: 200}, want: "more than 200 bytes unpacked", entries: base},
		{name: "FileQuota", limits: archive.Limits{MaxFileBytes: 8}, want: "workspace file acme/ana/notes/todo.md: 9 bytes; the per-file quota is 8 bytes", entries: base},
		{name: "WorkspaceQuota", limits: archive.Limits{MaxWorkspaceBytes: 10}, want: "workspace acme/ana: more than 10 bytes (the workspace quota)", entries: base},
		{name: "FolderCountQuota", limits: archive.Limits{MaxFiles: 1}, want: "workspace acme/ana: more than 1 folders (the folder-count quota)", entries: base},
		{name: "FileCountQuota", limits: archive.Limits{MaxFiles: 2}, want: "workspace acme/ana: more than 2 files (the file-count quota)",
			entries: withEntry(base, file("workspaces/acme/ana/third.txt", "x"))},
		{name: "OtherKeyring", kr: testKeyring(t, "k2", 2), want: "the configured keys (k2) cannot open this database's secrets (sealed under key k1)", entries: base},
		{name: "NoKeyring", want: "no encryption key is configured", entries: base},
		{name: "MemoryQuota", want: "the limit is 10000", is: store.ErrMemoryQuota, entries: overQuota(t, base)},
		{name: "SkillPathLeaves", want: `file path "../forms.md" leaves the folder`, is: store.ErrSkillInvalid,
			entries: editTable(base, "skill_files", func(body string) string {
				return strings.Replace(body, `"path":"forms.md"`, `"path":"../forms.md"`, 1)
			})},
		{name: "SkillBadName", want: "holds a character other than a-z", is: store.ErrSkillInvalid,
			entries: editTable(base, "skills", func(body string) string {
				return strings.Replace(body, `"name":"pdf"`, `"name":"PDF"`, 1)
			})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeArchive(t, tc.entries)
			place := sqlitePlace(t)
			o := options(place, tc.kr)
			if tc.name != "NoKeyring" && tc.kr == nil {
				o = options(place, kr)
			}
			o.Limits = tc.limits
			_, err := archive.ImportFile(t.Context(), path, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("import: %v; want an error with %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("import: %v; want it to wrap %v", err, tc.is)
			}
			if _, err := os.Stat(place.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused import created the data folder: %v", err)
			}
		})
	}
}

// overQuota returns entries with the first memory's owner holding one
// memory over store.MaxMemoriesPerOwner (copies of it under new ids, after
// the others in key order), the manifest counting them.
func overQuota(t *testing.T, entries []entry) []entry {
	t.Helper()
	var rows int
	out := editTable(entries, "memories", func(body string) string {
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		first := lines[0]
		id := regexp.MustCompile(`"id":"[^"]*"`).FindString(first)
		if id == "" {
			t.Fatalf("no id in the memory row %.80s", first)
		}
		var b strings.Builder
		b.WriteString(body)
		for i := 0; i <= store.MaxMemoriesPerOwner; i++ {
			b.WriteString(strings.Replace(first, id, fmt.Sprintf(`"id":"zz%05d"`, i), 1) + "\n")
		}
		rows = len(lines) + store.MaxMemoriesPerOwner + 1
		return b.String()
	})
	return editManifest(t, out, func(m map[string]any) { m["tables"].(map[string]any)["memories"] = rows })
}

// insertAfter returns entries with e after the one named name.
func insertAfter(entries []entry, name string, e entry) []entry {
	var out []entry
	for _, x := range entries {
		out = append(out, x)
		if x.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// slicesDelete returns entries without the one named name.
func slicesDelete(entries []entry, name string) []entry {
	var out []entry
	for _, e := range entries {
		if e.Name != name {
			out = append(out, e)
		}
	}
	return out
}

// TestImportRefusesANonEmptyStore: a store holding any record is refused,
// on either backend, and keeps what it held; so is a data folder with
// workspaces.
func TestImportRefusesANonEmptyStore(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	path, _ := export(t, source(t, kr), kr, "a.tar")
	for _, tc := range []struct {
		name  string
		place func(t *testing.T) backend.Config
	}{{"SQLite", sqlitePlace}, {"PostgreSQL", postgresPlace}} {
		t.Run(tc.name, func(t *testing.T) {
			place := tc.place(t)
			st := openStore(t, place)
			if err := st.CreateOrg(t.Context(), store.Org{ID: "mine", Name: "Mine", CreatedAt: at(0)}); err != nil {
				t.Fatal(err)
			}
			_, err := archive.ImportFile(t.Context(), path, options(place, kr))
			if !errors.Is(err, store.ErrNotEmpty) || !strings.Contains(err.Error(), "orgs hold rows") {
				t.Fatalf("import into a store with an organisation: %v", err)
			}
			if n, err := st.CountOrgs(t.Context()); n != 1 || err != nil {
				t.Errorf("organisations after the refusal: %d, %v", n, err)
			}
			if _, err := os.Stat(filepath.Join(place.Dir, "workspaces")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused import wrote workspaces: %v", err)
			}
		})
	}
	t.Run("Workspaces", func(t *testing.T) {
		place := sqlitePlace(t)
		if err := os.MkdirAll(filepath.Join(place.Dir, "workspaces", "acme"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := archive.ImportFile(t.Context(), path, options(place, kr))
		if err == nil || !strings.Contains(err.Error(), "workspaces is not empty") {
			t.Fatalf("import into a data folder with workspaces: %v", err)
		}
		if _, err := os.Stat(filepath.Join(place.Dir, sqlite.FileName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused import created the database: %v", err)
		}
	})
}

// TestImportFailingInTheDatabaseWritesNothing: rows that pass the checks
// but that the database refuses (a key twice) roll the whole import back:
// the store stays empty and no workspace is placed or left staged.
func TestImportFailingInTheDatabaseWritesNothing(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	good, _ := export(t, source(t, kr), kr, "good.tar")
	entries := editTable(readEntries(t, good), "messages", func(body string) string {
		first, _, _ := strings.Cut(body, "\n")
		return first + "\n" + body[:strings.LastIndex(strings.TrimSuffix(body, "\n"), "\n")+1]
	})
	path := writeArchive(t, entries)
	for _, tc := range []struct {
		name  string
		place func(t *testing.T) backend.Config
	}{{"SQLite", sqlitePlace}, {"PostgreSQL", postgresPlace}} {
		t.Run(tc.name, func(t *testing.T) {
			place := tc.place(t)
			_, err := archive.ImportFile(t.Context(), path, options(place, kr))
			if err == nil || !strings.Contains(err.Error(), "import messages") {
				t.Fatalf("import with a message twice: %v", err)
			}
			if err := openStore(t, place).CheckEmpty(t.Context()); err != nil {
				t.Errorf("after the failed import: %v", err)
			}
			left, err := os.ReadDir(filepath.Join(place.Dir, "workspaces"))
			if err != nil || len(left) != 0 {
				t.Errorf("workspaces after the failed import: %v, %v", left, err)
			}
		})
	}
}

// TestExportRefusals: an export refuses to overwrite a file, to create a
// store that is not there, and a workspace over a quota (which the import
// would refuse), leaving no file behind.
func TestExportRefusals(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := source(t, kr)
	t.Run("FileExists", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "taken.tar")
		if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := archive.ExportFile(t.Context(), path, options(src, kr))
		if b, _ := os.ReadFile(path); err == nil || !strings.Contains(err.Error(), "already exists") || string(b) != "mine" {
			t.Errorf("export over a file: %v, the file holds %q", err, b)
		}
	})
	t.Run("NoStore", func(t *testing.T) {
		missing := sqlitePlace(t)
		_, err := archive.ExportFile(t.Context(), filepath.Join(t.TempDir(), "a.tar"), options(missing, kr))
		if _, serr := os.Stat(missing.Dir); err == nil || !strings.Contains(err.Error(), "no store in") || !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("export of no store: %v (data folder: %v)", err, serr)
		}
	})
	t.Run("Quota", func(t *testing.T) {
		dir := t.TempDir()
		o := options(src, kr)
		o.Limits = archive.Limits{MaxFileBytes: 8}
		_, err := archive.ExportFile(t.Context(), filepath.Join(dir, "a.tar"), o)
		if left, _ := os.ReadDir(dir); err == nil || !strings.Contains(err.Error(), "per-file quota") || len(left) != 0 {
			t.Errorf("export over a quota: %v, left %v", err, left)
		}
	})
	t.Run("TextPostgreSQLRefuses", func(t *testing.T) {
		place := sqlitePlace(t)
		// The agent's name: a store cleans titles (store.CleanTitle) but
		// keeps this field as given.
		c := store.Conversation{ID: "c", OrgID: org, UserID: "u", Agent: "bad \xff agent", CreatedAt: at(0), UpdatedAt: at(0)}
		if err := openStore(t, place).PutConversation(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		_, err := archive.ExportFile(t.Context(), filepath.Join(dir, "a.tar"), options(place, kr))
		want := `table conversations: column agent: text that is not valid UTF-8 or holds a NUL (the row with key org_id="acme", id="c")`
		if left, _ := os.ReadDir(dir); err == nil || !strings.Contains(err.Error(), want) || len(left) != 0 {
			t.Errorf("export of an agent name that is not UTF-8: %v, left %v", err, left)
		}
	})
	t.Run("OtherKeyring", func(t *testing.T) {
		_, err := archive.ExportFile(t.Context(), filepath.Join(t.TempDir(), "a.tar"), options(src, testKeyring(t, "k2", 2)))
		if err == nil || !strings.Contains(err.Error(), "cannot open this database's secrets") {
			t.Errorf("export with another keyring: %v", err)
		}
	})
}

// TestExportGzip: a .tar.gz name, or Gzip, compresses; an import tells by
// the content.
func TestExportGzip(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := source(t, kr)
	o := options(src, kr)
	o.Gzip = true
	for _, tc := range []struct {
		name string
		o    archive.Options
	}{{"a.tar.gz", options(src, kr)}, {"b.archive", o}} {
		path := filepath.Join(t.TempDir(), tc.name)
		if _, err := archive.ExportFile(t.Context(), path, tc.o); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s is not gzip: %v", tc.name, err)
		}
		importInto(t, path, sqlitePlace(t), kr)
	}
}

// TestImportIgnoresArchiveModes: an archive asking for world-writable
// workspace files and folders gets the tools' own 0600 and 0700: an
// archive can neither open a workspace to other users of a shared data
// folder nor lock the server out of one.
func TestImportIgnoresArchiveModes(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	good, _ := export(t, source(t, kr), kr, "good.tar")
	entries := readEntries(t, good)
	for i, e := range entries {
		if strings.HasPrefix(e.Name, "workspaces/") {
			entries[i].Mode = 0o777
		}
	}
	place := sqlitePlace(t)
	importInto(t, writeArchive(t, entries), place, kr)
	root := filepath.Join(place.Dir, "workspaces")
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk: %d entries, %v", n, err)
	}
}

// TestImportRefusesMemoriesOverQuota: an archive giving an owner more
// memories than store.MaxMemoriesPerOwner is refused on either backend,
// as PutMemory would refuse the one over, and the target keeps none.
func TestImportRefusesMemoriesOverQuota(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	good, _ := export(t, source(t, kr), kr, "good.tar")
	base := readEntries(t, good)
	for name, place := range map[string]func(*testing.T) backend.Config{"SQLite": sqlitePlace, "PostgreSQL": postgresPlace} {
		t.Run(name, func(t *testing.T) {
			p := place(t)
			_, err := archive.ImportFile(t.Context(), writeArchive(t, overQuota(t, base)), options(p, kr))
			if !errors.Is(err, store.ErrMemoryQuota) {
				t.Fatalf("import over the quota: %v; want ErrMemoryQuota", err)
			}
			st, err := backend.Open(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.CheckEmpty(t.Context()); err != nil {
				t.Errorf("the refused import wrote: %v", err)
			}
		})
	}
}
