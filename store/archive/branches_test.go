package archive_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
)

// withoutColumn returns entries with column taken out of every row of
// table, as an archive exported before the column was.
func withoutColumn(t *testing.T, entries []entry, table, column string) []entry {
	t.Helper()
	return editTable(entries, table, func(body string) string {
		var out strings.Builder
		for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			var row map[string]any
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			delete(row, column)
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(b, '\n'))
		}
		return out.String()
	})
}

// TestImportLinksTurnsOfOlderArchives: an archive exported before
// branches (SQLite migration 18) has no parents nor heads; the import
// links each conversation's turns in order and makes the last its head,
// as the migrations do, on either backend. A current archive keeps its
// heads as they were (TestRoundTripSQLite compares it byte for byte).
func TestImportLinksTurnsOfOlderArchives(t *testing.T) {
	kr := testKeyring(t, "k1", 1)
	src := source(t, kr)
	good, _ := export(t, src, kr, "good.tar")
	entries := withoutColumn(t, readEntries(t, good), "conversations", "head_turn_id")
	entries = withoutColumn(t, entries, "turns", "parent_turn_id")
	entries = editManifest(t, entries, func(m map[string]any) { m["schema"].(map[string]any)["sqlite"] = 17 })
	old := writeArchive(t, entries)
	for _, tc := range []struct {
		name  string
		place func(t *testing.T) backend.Config
	}{{"SQLite", sqlitePlace}, {"PostgreSQL", postgresPlace}} {
		t.Run(tc.name, func(t *testing.T) {
			place := tc.place(t)
			importInto(t, old, place, kr)
			got, err := openStore(t, place).TurnTree(t.Context(), org, conv)
			if err != nil {
				t.Fatal(err)
			}
			// t2 holds no message: it is no turn of the tree.
			want := store.TurnTree{Head: "t1", Turns: []store.TurnLink{{ID: "t1"}}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("tree after importing an older archive (-want +got):\n%s", d)
			}
		})
	}
}
