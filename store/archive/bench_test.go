package archive_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/archive"
	"github.com/quiverhq/quiver/store/backend"
)

// benchMessages is the size of the benchmarks' store: 100 conversations
// of 100 messages of about 200 bytes, each conversation with its turn.
const benchMessages = 10_000

// fillMessages writes benchMessages messages into the store at place.
func fillMessages(b *testing.B, place backend.Config) {
	b.Helper()
	st, err := backend.Open(b.Context(), place)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	content := strings.Repeat("The quarterly numbers look fine. ", 6)
	for c := range benchMessages / 100 {
		id := fmt.Sprintf("c%03d", c)
		if err := st.PutTurn(b.Context(), store.Turn{ID: "t-" + id, OrgID: org, UserID: "ana", ConversationID: id, Tools: []string{"calculate"},
			Status: store.TurnDone, StartedAt: at(c), EndedAt: at(c + 1)}); err != nil {
			b.Fatal(err)
		}
		ms := make([]store.Message, 100)
		for i := range ms {
			ms[i] = store.Message{ConversationID: id, TurnID: "t-" + id, Role: "user", Content: content, CreatedAt: at(c)}
		}
		if _, err := st.AppendMessages(b.Context(), org, ms); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkArchive measures an export, and an import into an empty
// store, of a store of benchMessages messages, on each backend:
//
//	eval "$(scripts/postgres start)"
//	go test -run '^$' -bench BenchmarkArchive -benchtime 5x ./store/archive
func BenchmarkArchive(b *testing.B) {
	for _, tc := range []struct {
		name  string
		place func(b *testing.B) backend.Config
	}{
		{"SQLite", func(b *testing.B) backend.Config { return backend.Config{Dir: filepath.Join(b.TempDir(), "data")} }},
		{"PostgreSQL", func(b *testing.B) backend.Config {
			return backend.Config{URL: pgtest.URL(b), Dir: filepath.Join(b.TempDir(), "data")}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			src := tc.place(b)
			fillMessages(b, src)
			dir := b.TempDir()
			path := filepath.Join(dir, "source.tar")
			if _, err := archive.ExportFile(b.Context(), path, archive.Options{Place: src}); err != nil {
				b.Fatal(err)
			}
			b.Run("Export", func(b *testing.B) {
				out := b.TempDir()
				for i := 0; b.Loop(); i++ {
					if _, err := archive.ExportFile(b.Context(), filepath.Join(out, fmt.Sprintf("a%d.tar", i)), archive.Options{Place: src}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("Import", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					dst := tc.place(b)
					b.StartTimer()
					if _, err := archive.ImportFile(b.Context(), path, archive.Options{Place: dst}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
