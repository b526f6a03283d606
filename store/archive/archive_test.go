package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/keyring"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/archive"
	"github.com/quiverhq/quiver/store/backend"
)

// options are the options of an export or import of place with kr.
func options(place backend.Config, kr *secret.Keyring) archive.Options {
	return archive.Options{Place: place, Keyring: func() (*secret.Keyring, error) { return kr, nil },
		Quiver: "test", Now: at(1000)}
}

// sqlitePlace is a new SQLite deployment's place.
func sqlitePlace(t *testing.T) backend.Config {
	return backend.Config{Dir: filepath.Join(t.TempDir(), "data")}
}

// postgresPlace is a new PostgreSQL deployment's place: an empty database
// and a data folder.
func postgresPlace(t *testing.T) backend.Config {
	return backend.Config{URL: pgtest.URL(t), Dir: filepath.Join(t.TempDir(), "data")}
}

// openStore opens the store at place, closed when the test ends.
func openStore(t *testing.T, place backend.Config) store.Store {
	t.Helper()
	st, err := backend.Open(t.Context(), place)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// source is a SQLite deployment holding every kind of record and
// workspace, its secrets sealed with kr.
func source(t *testing.T, kr *secret.Keyring) backend.Config {
	t.Helper()
	place := sqlitePlace(t)
	st, err := backend.Open(t.Context(), place)
	if err != nil {
		t.Fatal(err)
	}
	fill(t.Context(), t, st, kr)
	st.Close()
	fillWorkspaces(t, place.Dir)
	return place
}

// export exports place to a new archive and returns its path.
func export(t *testing.T, place backend.Config, kr *secret.Keyring, name string) (string, archive.Summary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	sum, err := archive.ExportFile(t.Context(), path, options(place, kr))
	if err != nil {
		t.Fatalf("export %s: %v", place, err)
	}
	return path, sum
}

// importInto imports the archive at path into place.
func importInto(t *testing.T, path string, place backend.Config, kr *secret.Keyring) archive.Summary {
	t.Helper()
	sum, err := archive.ImportFile(t.Context(), path, options(place, kr))
	if err != nil {
		t.Fatalf("import into %s: %v", place, err)
	}
	return sum
}

// entry is one entry of an archive: its header fields that an export
// sets, and its content.
type entry struct {
	Name    string
	Type    byte
	Mode    int64
	ModTime time.Time
	Body    string
}

// readEntries reads every entry of the archive at path.
func readEntries(t *testing.T, path string) []entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	tr := tar.NewReader(r)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{Name: h.Name, Type: h.Typeflag, Mode: h.Mode, ModTime: h.ModTime, Body: string(b)})
	}
}

// manifestOf decodes a manifest.
func manifestOf(t *testing.T, body string) archive.Manifest {
	t.Helper()
	var m archive.Manifest
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sameContent requires two archives to hold the same entries but for the
// manifest, byte for byte, and the same row counts and workspace totals.
func sameContent(t *testing.T, what, a, b string) {
	t.Helper()
	ea, eb := readEntries(t, a), readEntries(t, b)
	if ea[0].Name != "manifest.json" || eb[0].Name != "manifest.json" {
		t.Fatalf("%s: the first entries are %q and %q", what, ea[0].Name, eb[0].Name)
	}
	ma, mb := manifestOf(t, ea[0].Body), manifestOf(t, eb[0].Body)
	if diff := cmp.Diff(ma.Tables, mb.Tables); diff != "" {
		t.Errorf("%s: row counts differ (-a +b):\n%s", what, diff)
	}
	if ma.Workspaces != mb.Workspaces {
		t.Errorf("%s: workspaces %+v and %+v", what, ma.Workspaces, mb.Workspaces)
	}
	lines := func(es []entry) map[string][]string {
		m := map[string][]string{}
		for _, e := range es[1:] {
			m[e.Name] = strings.SplitAfter(e.Body, "\n")
		}
		return m
	}
	if diff := cmp.Diff(lines(ea), lines(eb)); diff != "" {
		t.Errorf("%s: entries differ (-a +b):\n%s", what, diff)
	}
	if diff := cmp.Diff(ea[1:], eb[1:]); diff != "" {
		t.Errorf("%s: entry headers differ (-a +b):\n%s", what, diff)
	}
}

// TestRoundTripSQLitePostgresSQLite moves a deployment holding every kind
// of record from SQLite to PostgreSQL and back: each archive holds the
// same rows as the first, byte for byte, and each imported store works
// as the original did (secrets open with the same keyring, a token
// authenticates, the next message takes the next Seq, the next usage
// record an id of its own).
func TestRoundTripSQLitePostgresSQLite(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := source(t, kr)
	first, sum := export(t, src, kr, "first.tar.gz")
	checkExportSummary(t, sum)

	pg := postgresPlace(t)
	if got := importInto(t, first, pg, kr); got.Manifest.Tables["messages"] != 5 {
		t.Errorf("import summary counts %d messages", got.Manifest.Tables["messages"])
	}
	second, _ := export(t, pg, kr, "second.tar")
	sameContent(t, "SQLite then PostgreSQL", first, second)

	back := sqlitePlace(t)
	importInto(t, second, back, kr)
	third, _ := export(t, back, kr, "third.tar")
	sameContent(t, "SQLite then SQLite from PostgreSQL", first, third)

	for _, place := range []backend.Config{pg, back} {
		t.Run(place.Name(), func(t *testing.T) {
			checkImported(t, openStore(t, place), kr)
			checkWorkspaces(t, src.Dir, place.Dir)
		})
	}
}

// TestRoundTripSQLite restores a SQLite backup into SQLite: the same rows
// and workspaces, and a store that works as the original did.
func TestRoundTripSQLite(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := source(t, kr)
	first, _ := export(t, src, kr, "backup.tar")
	dst := sqlitePlace(t)
	importInto(t, first, dst, kr)
	second, _ := export(t, dst, kr, "again.tar")
	sameContent(t, "SQLite then SQLite", first, second)
	checkImported(t, openStore(t, dst), kr)
	checkWorkspaces(t, src.Dir, dst.Dir)
}

// TestSQLiteKeepsNanoseconds: SQLite keeps a time's nanoseconds, and so
// does a SQLite backup restored into SQLite.
func TestSQLiteKeepsNanoseconds(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := sqlitePlace(t)
	want := store.Conversation{ID: "c", OrgID: org, UserID: "u", CreatedAt: base.Add(123), UpdatedAt: base.Add(456)}
	if err := openStore(t, src).PutConversation(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	path, _ := export(t, src, kr, "ns.tar")
	dst := sqlitePlace(t)
	importInto(t, path, dst, kr)
	got, err := openStore(t, dst).GetConversation(t.Context(), org, "c")
	if err != nil || !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("restored %+v, %v; want %+v", got, err, want)
	}
}

// checkExportSummary checks what an export of source reports: every
// table counted, the transient tables named as not copied, and the
// workspace entries it left out.
func checkExportSummary(t *testing.T, sum archive.Summary) {
	t.Helper()
	m := sum.Manifest
	if m.Format != archive.FormatVersion || m.Backend != backend.SQLite || m.Schema[backend.Postgres] == 0 || !m.CreatedAt.Equal(at(1000)) {
		t.Errorf("manifest %+v", m)
	}
	for _, name := range []string{"runs", "turn_events", "schema_migrations", "message_counters", "memory_search"} {
		if m.Skipped[name] == "" {
			t.Errorf("the manifest does not say why %s is not copied", name)
		}
	}
	if m.Tables["runs"] != 0 || m.Tables["usage"] != 3 || m.Tables["deployment"] != 1 || m.Tables["blobs"] != 2 || m.Tables["memories"] != 2 {
		t.Errorf("row counts %v", m.Tables)
	}
	if want := (archive.Files{Files: 3, Folders: 5, Bytes: 20}); m.Workspaces != want {
		t.Errorf("workspaces %+v, want %+v", m.Workspaces, want)
	}
	var skipped []string
	for _, f := range sum.Skipped {
		skipped = append(skipped, f.Path)
	}
	want := []string{"acme/ana/passwd", "acme/bo/linked-too.bin", "acme/bo/linked.bin"}
	if !slices.Equal(skipped, want) || sum.SkippedFiles != 3 {
		t.Errorf("skipped %v (%d), want %v", skipped, sum.SkippedFiles, want)
	}
	var text bytes.Buffer
	sum.WriteText(&text)
	if !strings.Contains(text.String(), "not copied: turn_events (transient") || !strings.Contains(text.String(), "skipped in workspaces: acme/ana/passwd (a symbolic link") {
		t.Errorf("summary text:\n%s", text.String())
	}
}

// checkImported checks that an imported store works as the one fill
// wrote: secrets open with the same keyring (and the keyring check
// refuses another), the API token authenticates, transient records are
// gone, and new records take the next Seq and ids.
func checkImported(t *testing.T, st store.Store, kr *secret.Keyring) {
	t.Helper()
	ctx := t.Context()
	if err := keyring.Check(ctx, st, kr); err != nil {
		t.Errorf("the same keyring: %v", err)
	}
	if err := keyring.Check(ctx, st, testKeyring(t, "k2", 2)); err == nil {
		t.Error("another keyring passed the imported keyring check")
	}
	openSealed(t, kr, mcpToken, func() (string, []byte) {
		s, err := st.GetMCPServer(ctx, org, "docs")
		if err != nil {
			t.Fatal(err)
		}
		return s.Token, mcpclient.TokenAAD(org, s.ID)
	})
	openSealed(t, kr, settingKey, func() (string, []byte) {
		s, err := st.GetOrgSettings(ctx, org)
		if err != nil || s.Version != 1 {
			t.Fatalf("settings %+v, %v", s, err)
		}
		return s.Secrets["openai"], settings.SecretAAD(org, "openai")
	})
	if c, err := st.LookupCredential(ctx, store.CredAPIToken, hash(apiToken), at(50)); err != nil || c.UserID != "ana" {
		t.Errorf("the API token: %+v, %v", c, err)
	}
	checkRecords(ctx, t, st)
	checkMemories(t, st)
	seq, err := st.AppendMessage(ctx, org, store.Message{ConversationID: conv, Role: "user", Content: "next", CreatedAt: at(40)})
	if err != nil || seq != 5 {
		t.Errorf("a message appended after the import: seq %d, %v; want 5", seq, err)
	}
	if err := st.PutUsage(ctx, store.Usage{OrgID: org, TurnID: "t1", Step: 9, CreatedAt: at(40)}); err != nil {
		t.Errorf("a usage record after the import: %v", err)
	}
	if us, err := st.ListUsage(ctx, org, "t1"); err != nil || len(us) != 4 {
		t.Errorf("usage after the import: %d records, %v", len(us), err)
	}
}

// openSealed opens the sealed value get returns and compares it to want.
func openSealed(t *testing.T, kr *secret.Keyring, want string, get func() (string, []byte)) {
	t.Helper()
	sealed, aad := get()
	pt, err := kr.Open(sealed, aad)
	if err != nil || string(pt) != want {
		t.Errorf("sealed value opens to %q, %v; want %q", pt, err, want)
	}
}

// checkRecords reads back the records whose encoding an archive must keep
// exactly.
func checkRecords(ctx context.Context, t *testing.T, st store.Store) {
	t.Helper()
	ms, err := st.ListMessages(ctx, org, conv, 0)
	if err != nil || len(ms) != 4 || ms[2].Content != weirdContent || !ms[2].IsError || ms[3].Seq != 4 {
		t.Errorf("messages %+v, %v", ms, err)
	}
	if r, err := st.GetResult(ctx, org, conv, "r1"); err != nil || r.Body != weirdContent {
		t.Errorf("result %+v, %v", r, err)
	}
	turn, err := st.GetTurn(ctx, org, "t1")
	wantEx := []store.Exclusion{{Name: "fetch_url", Reason: "switch off \x00 quoted"}}
	if err != nil || turn.Selected != 7 || !slices.Equal(turn.Excluded, wantEx) || !turn.EndedAt.Equal(at(12)) || !slices.Equal(turn.Tools, []string{"calculate", "read_file"}) {
		t.Errorf("turn %+v, %v", turn, err)
	}
	if t2, err := st.GetTurn(ctx, org, "t2"); err != nil || t2.Declared != nil || t2.Excluded != nil || !t2.EndedAt.IsZero() {
		t.Errorf("turn t2 %+v, %v", t2, err)
	}
	if docs, err := st.GetMCPServer(ctx, org, "docs"); err != nil || docs.Tools != nil {
		t.Errorf("never discovered: tools %#v, %v", docs.Tools, err)
	}
	if empty, err := st.GetMCPServer(ctx, org, "empty"); err != nil || empty.Tools == nil || len(empty.Tools) != 0 {
		t.Errorf("discovered none: tools %#v, %v", empty.Tools, err)
	}
	if b, err := st.GetBlob(ctx, org, "b1"); err != nil || len(b.Data) != 1000 || b.Data[999] != byte(999*7%256) {
		t.Errorf("blob %v", err)
	}
	if u, err := st.GetUser(ctx, org, "bo"); err != nil || !u.DisabledAt.Equal(at(6)) {
		t.Errorf("disabled user %+v, %v", u, err)
	}
	if trig, err := st.ListIntentTriggers(ctx, org); err != nil || len(trig) != 2 {
		t.Errorf("triggers %+v, %v", trig, err)
	}
	if _, err := st.GetRun(ctx, org, conv); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a run was copied: %v", err)
	}
	if evs, err := st.ListTurnEvents(ctx, org, "t2", 0, 10); err != nil || len(evs) != 0 {
		t.Errorf("turn events were copied: %d, %v", len(evs), err)
	}
	if c, err := st.GetConversation(ctx, org, conv); err != nil || c.Model != "openai:y" {
		t.Errorf("conversation %+v, %v", c, err)
	}
	if sk, err := st.GetSkill(ctx, org, "pdf"); err != nil || len(sk.Files) != 2 || !sk.CreatedAt.Equal(at(21)) {
		t.Errorf("skill %+v, %v", sk, err)
	}
	if f, err := st.ReadSkillFile(ctx, org, "pdf", "scripts/logo.bin"); err != nil || string(f.Data) != weirdContent {
		t.Errorf("skill file %q, %v", f.Data, err)
	}
	if sks, err := st.AgentSkills(ctx, org, "helper"); err != nil || len(sks) != 1 {
		t.Errorf("attached skills %+v, %v", sks, err)
	}
	// What search reads is not in the archive: the import rebuilt it.
	for text, want := range map[string]int{"17.5%": 1, "BUDGET": 1, "409.5": 0} {
		cs, err := st.FindConversations(ctx, store.ConversationQuery{OrgID: org, UserID: "ana", Text: text})
		if err != nil || len(cs) != want {
			t.Errorf("search %q after the import: %d conversations, %v; want %d", text, len(cs), err, want)
		}
	}
}

// checkWorkspaces compares the workspaces of two data folders: the same
// folders and regular files, with their times; the copy's files are 0600
// and its folders 0700, whatever the archive says; what an archive leaves
// out is absent from the copy.
func checkWorkspaces(t *testing.T, from, to string) {
	t.Helper()
	type file struct {
		Dir     bool
		ModTime time.Time
		Body    string
	}
	walk := func(dir string) map[string]file {
		out := map[string]file{}
		root := filepath.Join(dir, "workspaces")
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			fi, err := os.Lstat(p)
			if err != nil || strings.HasPrefix(d.Name(), ".quiver-") || fi.Mode()&os.ModeSymlink != 0 || strings.Contains(rel, "linked") {
				return err
			}
			f := file{Dir: d.IsDir(), ModTime: fi.ModTime().UTC()}
			if want := os.FileMode(0o600); dir == to && !d.IsDir() && fi.Mode().Perm() != want || dir == to && d.IsDir() && fi.Mode().Perm() != 0o700 {
				t.Errorf("imported %s has mode %v", rel, fi.Mode().Perm())
			}
			if !d.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				f.Body = string(b)
			}
			out[rel] = f
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if diff := cmp.Diff(walk(from), walk(to)); diff != "" {
		t.Errorf("workspaces differ (-from +to):\n%s", diff)
	}
	for _, left := range []string{"acme/ana/passwd", "acme/bo/linked.bin", "acme/ana/.quiver-lock"} {
		if _, err := os.Lstat(filepath.Join(to, "workspaces", left)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was copied: %v", left, err)
		}
	}
}

// TestLargestBlobRoundTrips: a blob of store.MaxBlobBytes, the largest
// row there is, fits MaxLineBytes and comes back whole.
func TestLargestBlobRoundTrips(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := sqlitePlace(t)
	data := bytes.Repeat([]byte{0xff, 0x00, 0x7f}, store.MaxBlobBytes/3+1)[:store.MaxBlobBytes]
	b := store.Blob{OrgID: org, ID: "big", OwnerID: "ana", Name: strings.Repeat("n", 255), MediaType: "application/octet-stream", CreatedAt: at(0), Data: data}
	if _, err := openStore(t, src).PutBlob(t.Context(), b, store.BlobQuota{}); err != nil {
		t.Fatal(err)
	}
	path, _ := export(t, src, kr, "big.tar")
	dst := sqlitePlace(t)
	importInto(t, path, dst, kr)
	got, err := openStore(t, dst).GetBlob(t.Context(), org, "big")
	if err != nil || !bytes.Equal(got.Data, data) {
		t.Errorf("the largest blob: %d bytes back, %v", len(got.Data), err)
	}
}

// checkMemories: the imported memories keep their vectors byte for byte
// and are found by full-text search, whose index the import rebuilt.
func checkMemories(t *testing.T, st store.Store) {
	t.Helper()
	ctx := t.Context()
	m, err := st.GetMemory(ctx, org, "ana", "m1")
	if err != nil {
		t.Fatalf("GetMemory after the import: %v", err)
	}
	v, err := embed.Local{}.Embed(ctx, []string{m.Text}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Vector, embed.Pack(v[0])) || m.Model != (embed.Local{}).Model().String() {
		t.Errorf("the imported memory's vector or model differ: %q", m.Model)
	}
	for q, want := range map[string]string{"tea": "m1", "van phong": "m2"} {
		got, err := st.SearchMemories(ctx, store.MemorySearch{OrgID: org, OwnerID: "ana", Text: q})
		if err != nil || len(got) != 1 || got[0].ID != want {
			t.Errorf("SearchMemories(%q) after the import: %+v, %v; want %s", q, got, err, want)
		}
	}
}
