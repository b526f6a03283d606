package postgres

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
)

// The benchmarks mirror store/sqlite's, on a server on loopback, so the
// two backends' hot operations compare with one command:
//
//	go test -run '^$' -bench . ./store/sqlite ./store/postgres

// BenchmarkAppendMessage appends 512-byte messages to one conversation,
// from one goroutine and then from GOMAXPROCS goroutines at once (which
// queue on the conversation's counter row), and to one conversation per
// goroutine (which do not).
func BenchmarkAppendMessage(b *testing.B) {
	s := openTest(b, pgtest.URL(b))
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
	var workers atomic.Int64
	b.Run("parallel-conversations", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			own := m
			own.ConversationID = fmt.Sprintf("conv-%d", workers.Add(1))
			for pb.Next() {
				if _, err := s.AppendMessage(b.Context(), "org", own); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkAppendMessages appends a model step's worth of messages (an
// assistant reply, two tool calls, two results) in one batch.
func BenchmarkAppendMessages(b *testing.B) {
	s := openTest(b, pgtest.URL(b))
	step := make([]store.Message, 5)
	for i := range step {
		step[i] = store.Message{ConversationID: "conv", TurnID: "turn", Role: "tool",
			Content: strings.Repeat("y", 512), CreatedAt: time.Now()}
	}
	for b.Loop() {
		if _, err := s.AppendMessages(b.Context(), "org", step); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListMessages reads a 100-message transcript of 512-byte
// messages, as every turn's collect does.
func BenchmarkListMessages(b *testing.B) {
	s := openTest(b, pgtest.URL(b))
	msgs := make([]store.Message, 100)
	for i := range msgs {
		msgs[i] = store.Message{ConversationID: "conv", TurnID: "turn", Role: "user",
			Content: strings.Repeat("z", 512), CreatedAt: time.Now()}
	}
	if _, err := s.AppendMessages(b.Context(), "org", msgs); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if got, err := s.ListMessages(b.Context(), "org", "conv", 0); err != nil || len(got) != len(msgs) {
				b.Fatalf("ListMessages: %d messages, %v", len(got), err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.ListMessages(b.Context(), "org", "conv", 0); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkGetConversation reads one conversation of 1000.
func BenchmarkGetConversation(b *testing.B) {
	const n = 1000
	s := openTest(b, pgtest.URL(b))
	for i := range n {
		c := store.Conversation{ID: fmt.Sprintf("conv_%04d", i), OrgID: "org", UserID: "user",
			Agent: "assistant", Title: "Flights", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := s.PutConversation(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := s.GetConversation(b.Context(), "org", fmt.Sprintf("conv_%04d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, err := s.GetConversation(b.Context(), "org", fmt.Sprintf("conv_%04d", i%n)); err != nil {
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
	s := openTest(b, pgtest.URL(b))
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
