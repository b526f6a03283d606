package sqlite

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// BenchmarkAppendMessage appends 512-byte messages to one conversation,
// from one goroutine and then from GOMAXPROCS goroutines at once.
func BenchmarkAppendMessage(b *testing.B) {
	s := openTest(b, b.TempDir())
	m := store.Message{
		ConversationID: "conv", TurnID: "turn", Role: "assistant",
		Content: strings.Repeat("x", 512), CreatedAt: time.Now(),
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.AppendMessage(b.Context(), "org", m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.AppendMessage(b.Context(), "org", m); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkGetResult reads 4 KiB results from a store holding 1000.
func BenchmarkGetResult(b *testing.B) {
	const n = 1000
	s := openTest(b, b.TempDir())
	for i := range n {
		r := store.Result{
			Ref: fmt.Sprintf("res_%04d", i), OrgID: "org", ConversationID: "conv",
			TurnID: "turn", Tool: "web.fetch", Body: strings.Repeat("y", 4096), CreatedAt: time.Now(),
		}
		if err := s.PutResult(b.Context(), r, store.ResultQuota{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := s.GetResult(b.Context(), "org", "conv", fmt.Sprintf("res_%04d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, err := s.GetResult(b.Context(), "org", "conv", fmt.Sprintf("res_%04d", i%n)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
