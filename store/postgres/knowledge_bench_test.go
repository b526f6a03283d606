package postgres

import (
	"testing"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkKnowledgeIndexing indexes a 100-page text document per
// iteration (see storetest.BenchmarkKnowledgeIndexing).
func BenchmarkKnowledgeIndexing(b *testing.B) {
	storetest.BenchmarkKnowledgeIndexing(b, openTest(b, pgtest.URL(b)), 100)
}
