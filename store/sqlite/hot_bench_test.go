package sqlite

import (
	"testing"

	"github.com/quiverhq/quiver/store/storetest"
)

// BenchmarkHotOps times the store calls every turn makes, one at a time,
// with their p50 and p99 (see storetest.BenchmarkHotOps); store/postgres
// runs the same code:
//
//	go test -run '^$' -bench BenchmarkHotOps ./store/sqlite ./store/postgres
func BenchmarkHotOps(b *testing.B) {
	storetest.BenchmarkHotOps(b, openTest(b, b.TempDir()))
}

// BenchmarkConversationSearch times conversation search and listing over
// 1,000 conversations of 20 messages (see
// storetest.BenchmarkConversationSearch); store/postgres runs the same:
//
//	go test -run '^$' -bench BenchmarkConversationSearch ./store/sqlite ./store/postgres
func BenchmarkConversationSearch(b *testing.B) {
	storetest.BenchmarkConversationSearch(b, openTest(b, b.TempDir()))
}

// BenchmarkHistorySearch times search_conversations' store search over
// the same corpus (see storetest.BenchmarkHistorySearch):
//
//	go test -run '^$' -bench BenchmarkHistorySearch ./store/sqlite ./store/postgres
func BenchmarkHistorySearch(b *testing.B) {
	storetest.BenchmarkHistorySearch(b, openTest(b, b.TempDir()))
}
