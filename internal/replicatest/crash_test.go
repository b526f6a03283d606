package replicatest_test

import (
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/internal/replicatest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
)

// crashAcks is how many acknowledged writes the writer makes before it is
// killed: enough that its eight workers are all mid-write.
const crashAcks = 500

// TestCrashSafety kills a process writing to the store from eight
// goroutines at once (single messages, batches of two, turns) with
// SIGKILL, mid-write, and opens the store again as a restarted server
// would: it opens cleanly (SQLite: integrity_check ok), every write the
// process acknowledged before it died is there with its content, and
// each conversation takes its next message after every one stored.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	for _, name := range []string{backend.SQLite, backend.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := backend.Config{Dir: t.TempDir()}
			if name == backend.Postgres {
				db.URL = pgtest.URL(t)
			}
			w := replicatest.StartWriter(t, replicatest.WriterOptions{DatabaseURL: db.URL, Data: db.Dir})
			w.WaitAcks(t, crashAcks)
			acks := w.Kill(t)
			if name == backend.SQLite {
				if got := replicatest.IntegrityCheck(t, db.Dir); got != "ok" {
					t.Fatalf("integrity_check after the kill: %s", got)
				}
			}
			st, err := backend.Open(t.Context(), db)
			if err != nil {
				t.Fatalf("open after the kill: %v", err)
			}
			defer st.Close()
			if err := replicatest.CheckAcks(t.Context(), st, w.Org, acks); err != nil {
				t.Error(err)
			}
			for _, conv := range w.Conversations {
				checkNextAppend(t, st, w.Org, conv)
			}
		})
	}
}

// checkNextAppend appends a message to conv and checks that its Seq is
// past every stored message's.
func checkNextAppend(t *testing.T, st store.Store, org, conv string) {
	t.Helper()
	msgs, err := st.ListMessages(t.Context(), org, conv, 0)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := st.AppendMessage(t.Context(), org, store.Message{ConversationID: conv, Role: "user", Content: "after", CreatedAt: time.Now()})
	if err != nil {
		t.Fatalf("append to %s after the kill: %v", conv, err)
	}
	if n := len(msgs); n > 0 && seq <= msgs[n-1].Seq {
		t.Errorf("%s: the next message got Seq %d, not past the stored %d", conv, seq, msgs[n-1].Seq)
	}
}
