package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TestWriterWaitBounded: while another write holds the single writer
// connection, a write waits for it no longer than its context's write
// wait and then fails with store.ErrBusy, having written nothing; once
// the writer is free the same write succeeds.
func TestWriterWaitBounded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	held, release := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- s.inWriteTx(ctx, func(*sql.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	wctx := store.WithWriteWait(ctx, 20*time.Millisecond)
	if _, _, err := s.TakeToken(wctx, "k", 10, time.Second, now); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("TakeToken with the writer held: %v, want store.ErrBusy", err)
	}
	if _, err := s.AppendMessages(wctx, "org", []store.Message{{ConversationID: "c", Role: store.RoleUser, Content: "x", CreatedAt: now}}); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("AppendMessages with the writer held: %v, want store.ErrBusy", err)
	}
	close(release)
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	if _, err := getRateBucket(ctx, s.reader, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused take left a bucket: %v", err)
	}
	if _, ok, err := s.TakeToken(wctx, "k", 10, time.Second, now); err != nil || !ok {
		t.Fatalf("TakeToken with the writer free: ok %v, %v", ok, err)
	}
}

// TestBusyCodes: SQLITE_BUSY and SQLITE_LOCKED, extended codes included,
// are store.ErrBusy; other errors are not.
func TestBusyCodes(t *testing.T) {
	for _, tc := range []struct {
		code int
		want bool
	}{{5, true}, {5 | 2<<8, true}, {6, true}, {1, false}, {19, false}} {
		if got := errors.Is(busy(codedErr(tc.code)), store.ErrBusy); got != tc.want {
			t.Errorf("code %d: busy %v, want %v", tc.code, got, tc.want)
		}
	}
	if busy(nil) != nil {
		t.Error("busy(nil) is not nil")
	}
}

type codedErr int

func (c codedErr) Error() string { return "sqlite error" }
func (c codedErr) Code() int     { return int(c) }
