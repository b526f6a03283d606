package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/store"
)

// benchPageRunes is what a benchmark counts as a page of text: about
// 3,000 characters, a printed page of prose.
const benchPageRunes = 3000

// BenchmarkKnowledgeIndexing adds a text document of pages pages to an
// agent's knowledge per iteration, through knowledge.Index with the local
// embedder (extract, chunk, embed, store in batches, make ready), and
// reports pages/s and chunks/s. Each iteration's document goes to a new
// agent, so no cap is reached however long it runs.
func BenchmarkKnowledgeIndexing(b *testing.B, s store.Knowledge, pages int) {
	var sb strings.Builder
	for i := 0; sb.Len() < pages*benchPageRunes; i++ {
		fmt.Fprintf(&sb, "Paragraph %d. The quarterly report of office %d describes revenue, shipping costs and hiring plans for the next season in some detail.\n\n", i, i%97)
	}
	data := []byte(sb.String())
	org := newRunIDB(b)
	x := &knowledge.Index{Store: s, Embedders: embed.Fixed{E: embed.Local{}}}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	chunks := 0
	for i := 0; b.Loop(); i++ {
		d, err := x.Add(b.Context(), org, fmt.Sprintf("agent%d", i), knowledge.File{Name: "report.txt", MediaType: "text/plain", Data: data}, nil)
		if err != nil || d.Status != store.KnowledgeReady {
			b.Fatalf("Add = %+v, %v", d, err)
		}
		chunks += d.Chunks
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(pages*b.N)/sec, "pages/s")
	b.ReportMetric(float64(chunks)/sec, "chunks/s")
}

// newRunIDB is newRunID for a benchmark.
func newRunIDB(b *testing.B) string {
	return fmt.Sprintf("bench-knowledge-%d", b.N) + "-" + strings.ReplaceAll(b.Name(), "/", "-")
}
