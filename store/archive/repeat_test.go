package archive_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/archive"
	"github.com/quiverhq/quiver/store/backend"
)

// withUsageRepeated returns entries with the first usage record stored a
// second time under a new id (what a step sent again after a lost answer
// stored before the step key), the manifest counting it, and the
// manifest's SQLite schema set to schema.
func withUsageRepeated(t *testing.T, entries []entry, schema int) []entry {
	t.Helper()
	entries = editTable(entries, "usage", func(body string) string {
		first, _, _ := strings.Cut(body, "\n")
		var row map[string]any
		if err := json.Unmarshal([]byte(first), &row); err != nil {
			t.Fatal(err)
		}
		row["id"] = 9999
		row["input_tokens"] = 777 // the repeat differs: the first must win
		b, err := json.Marshal(row)
		if err != nil {
			t.Fatal(err)
		}
		return body + string(b) + "\n"
	})
	return editManifest(t, entries, func(m map[string]any) {
		m["schema"].(map[string]any)["sqlite"] = schema
		tables := m["tables"].(map[string]any)
		tables["usage"] = tables["usage"].(float64) + 1
	})
}

// TestImportKeepsTheFirstOfRepeatedStepRecords: an archive exported
// before the usage step key (SQLite migration 16) may hold a step's
// record twice; the import keeps the first, as the migration did, says
// so in its summary, and imports everything else, on either backend. The
// same rows in an archive of a schema with the key are refused, writing
// nothing.
func TestImportKeepsTheFirstOfRepeatedStepRecords(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := source(t, kr)
	good, _ := export(t, src, kr, "good.tar")
	base := readEntries(t, good)
	want, err := openStore(t, src).ListUsage(t.Context(), "acme", "t1")
	if err != nil || len(want) == 0 {
		t.Fatalf("the source's usage: %v, %v", want, err)
	}
	old := writeArchive(t, withUsageRepeated(t, base, 15))
	for _, tc := range []struct {
		name  string
		place func(t *testing.T) backend.Config
	}{{"SQLite", sqlitePlace}, {"PostgreSQL", postgresPlace}} {
		t.Run(tc.name, func(t *testing.T) {
			place := tc.place(t)
			sum := importInto(t, old, place, kr)
			if sum.Repeated["usage"] != 1 || len(sum.Repeated) != 1 {
				t.Errorf("summary's repeated rows: %v; want usage 1", sum.Repeated)
			}
			var text strings.Builder
			sum.WriteText(&text)
			if !strings.Contains(text.String(), "left out: 1 usage rows repeating") {
				t.Errorf("the summary does not say a row was left out:\n%s", text.String())
			}
			got, err := openStore(t, place).ListUsage(t.Context(), "acme", "t1")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("usage after the import: %d records; want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].InputTokens != want[i].InputTokens || got[i].Step != want[i].Step {
					t.Errorf("record %d: step %d, %d input tokens; want step %d, %d", i, got[i].Step, got[i].InputTokens, want[i].Step, want[i].InputTokens)
				}
			}
		})
	}
	t.Run("CurrentSchemaRefused", func(t *testing.T) {
		place := sqlitePlace(t)
		current := writeArchive(t, withUsageRepeated(t, base, 16))
		_, err := archive.ImportFile(t.Context(), current, options(place, kr))
		if err == nil || !strings.Contains(err.Error(), "import usage") {
			t.Fatalf("import of a repeated step record at a schema with the key: %v", err)
		}
		if err := openStore(t, place).CheckEmpty(t.Context()); err != nil {
			t.Errorf("after the refused import: %v", err)
		}
	})
}

// TestUsageStepKeyNamesItsMigrations: the migrations the usage table's
// ArchiveUnique names are, on each backend, the ones that add the step
// key (a renumbered migration would make the import keep repeats from
// archives that cannot hold them, or refuse old ones).
func TestUsageStepKeyNamesItsMigrations(t *testing.T) {
	i := slices.IndexFunc(store.ArchiveTables(), func(tb store.ArchiveTable) bool { return tb.Name == "usage" })
	u := store.ArchiveTables()[i].Unique
	if u == nil {
		t.Fatal("the usage table has no unique key")
	}
	for _, b := range []string{"sqlite", "postgres"} {
		name := filepath.Join("..", b, "migrations", fmt.Sprintf("%04d_usage_step_key.sql", u.Since[b]))
		sql, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !strings.Contains(string(sql), "CREATE UNIQUE INDEX usage_step ON usage (org_id, turn_id, step)") {
			t.Errorf("%s does not add the key %v", name, u.Columns)
		}
	}
}
