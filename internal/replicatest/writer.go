package replicatest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, for IntegrityCheck

	"github.com/quiverhq/quiver/internal/childproc"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
	"github.com/quiverhq/quiver/store/sqlite"
)

// Environment of a writer child (see Main).
const (
	envRole   = "QUIVER_REPLICATEST_ROLE"
	envWriter = "QUIVER_REPLICATEST_WRITER"
	roleWrite = "writer"
)

// Main runs the test binary's role: the writer child that StartWriter
// re-executes this binary as, or else the tests (m.Run). A package that
// starts writers calls it from its TestMain:
//
//	func TestMain(m *testing.M) { replicatest.Main(m) }
func Main(m *testing.M) {
	if os.Getenv(envRole) == roleWrite {
		os.Exit(runWriter())
	}
	os.Exit(m.Run())
}

// WriterOptions say where a writer writes and how hard.
type WriterOptions struct {
	// DatabaseURL is the PostgreSQL database; "" means SQLite in Data.
	DatabaseURL string
	// Data is the SQLite data folder (with DatabaseURL "", required).
	Data string
	// Workers is how many goroutines write at once; 0 means 8.
	Workers int
}

// writerConfig is what the child is told, as JSON in envWriter.
type writerConfig struct {
	URL, Dir, Org, User, Prefix string
	Workers                     int
}

// Ack is one write the writer child reported done: the store's call
// returned without error before the child printed it.
type Ack struct {
	// Kind is "message" or "turn".
	Kind string
	// Conversation, Seq and Content are a message's.
	Conversation string
	Seq          int64
	Content      string
	// Turn is a turn's id.
	Turn string
}

// Writer is a child process (this test binary, re-executed; see Main)
// that appends messages (one at a time and in batches) and stores turns
// through store/backend from several goroutines at once, as fast as it
// can, printing each acknowledged write. A test kills it mid-write and
// checks that every acknowledged write survived (CheckAcks).
type Writer struct {
	// Org and Conversations are where it writes.
	Org           string
	Conversations []string

	p *Process

	mu       sync.Mutex
	acks     []Ack
	bad      []string
	progress chan struct{}
}

// StartWriter prepares the store (migrated, an organisation, a user and
// one conversation per worker) and starts a writer on it.
func StartWriter(tb testing.TB, o WriterOptions) *Writer {
	tb.Helper()
	if o.Workers == 0 {
		o.Workers = 8
	}
	url := o.DatabaseURL
	if url != "" {
		url = WithApplicationName(tb, url, "quiver-writer")
	}
	cfg := writerConfig{URL: url, Dir: o.Data, Org: "crash", User: "writer", Prefix: "crash", Workers: o.Workers}
	w := &Writer{Org: cfg.Org, progress: make(chan struct{}, 1)}
	for i := range o.Workers {
		w.Conversations = append(w.Conversations, writerConversation(cfg, i))
	}
	prepareWriterStore(tb, cfg, w.Conversations)
	raw, _ := json.Marshal(cfg)
	exe, err := os.Executable()
	if err != nil {
		tb.Fatalf("replicatest: the test binary: %v", err)
	}
	vars := map[string]string{envRole: roleWrite, envWriter: string(raw)}
	// -test.run=^$: should the binary's TestMain not call Main, the child
	// runs no test (and prints no acknowledgement) instead of the suite.
	w.p = startProcess(tb, "writer", exe, []string{"-test.run=^$"}, childproc.Env(vars), nil, w.line)
	return w
}

// writerConversation is worker i's conversation.
func writerConversation(cfg writerConfig, i int) string { return fmt.Sprintf("%s-%d", cfg.Prefix, i) }

// prepareWriterStore opens (so migrates) the store and creates what the
// writes belong to, so that the child only appends.
func prepareWriterStore(tb testing.TB, cfg writerConfig, convs []string) {
	tb.Helper()
	ctx := context.Background()
	st, err := backend.Open(ctx, backend.Config{URL: cfg.URL, Dir: cfg.Dir})
	if err != nil {
		tb.Fatalf("replicatest: open the writer's store: %v", err)
	}
	defer st.Close()
	now := time.Now().UTC()
	if err := st.CreateOrg(ctx, store.Org{ID: cfg.Org, Name: "Crash", CreatedAt: now}); err != nil {
		tb.Fatalf("replicatest: %v", err)
	}
	u := store.User{ID: cfg.User, OrgID: cfg.Org, DisplayName: "Writer", Role: store.RoleMember, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateUser(ctx, u); err != nil {
		tb.Fatalf("replicatest: %v", err)
	}
	for _, id := range convs {
		c := store.Conversation{ID: id, OrgID: cfg.Org, UserID: cfg.User, Agent: "assistant", CreatedAt: now, UpdatedAt: now}
		if err := st.PutConversation(ctx, c); err != nil {
			tb.Fatalf("replicatest: %v", err)
		}
	}
}

// line records one line of the child's stdout.
func (w *Writer) line(s string) {
	a, err := parseAck(s)
	w.mu.Lock()
	if err != nil {
		w.bad = append(w.bad, s)
	} else {
		w.acks = append(w.acks, a)
	}
	w.mu.Unlock()
	select {
	case w.progress <- struct{}{}:
	default:
	}
}

// WaitAcks waits until the writer acknowledged at least n writes; a
// writer that exits first fails the test.
func (w *Writer) WaitAcks(tb testing.TB, n int) {
	tb.Helper()
	for {
		w.mu.Lock()
		got := len(w.acks)
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-w.progress:
		case <-w.p.Exited():
			tb.Fatalf("replicatest: the writer exited with status %d after %d acknowledgements; it printed:\n%s", w.p.Wait(), got, w.p.Log())
		}
	}
}

// Kill kills the writer with SIGKILL, mid-write, and returns every write
// it acknowledged: the lines it printed before it died, read to the end
// of its output.
func (w *Writer) Kill(tb testing.TB) []Ack {
	tb.Helper()
	w.p.Kill()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bad) > 0 {
		tb.Errorf("replicatest: the writer printed %d lines that are not acknowledgements, first %q", len(w.bad), w.bad[0])
	}
	return append([]Ack(nil), w.acks...)
}

// CheckAcks reports every acknowledged write st lacks: a message
// missing, or stored at its Seq with other content, or a turn missing or
// not done. It reads each conversation once.
func CheckAcks(ctx context.Context, st store.Store, org string, acks []Ack) error {
	stored := map[string]map[int64]store.Message{}
	var missing []string
	for _, a := range acks {
		switch a.Kind {
		case "message":
			msgs, ok := stored[a.Conversation]
			if !ok {
				list, err := st.ListMessages(ctx, org, a.Conversation, 0)
				if err != nil {
					return fmt.Errorf("list %s: %w", a.Conversation, err)
				}
				msgs = map[int64]store.Message{}
				for _, m := range list {
					msgs[m.Seq] = m
				}
				stored[a.Conversation] = msgs
			}
			if m, ok := msgs[a.Seq]; !ok || m.Content != a.Content {
				missing = append(missing, fmt.Sprintf("message %s #%d %q (stored: %q)", a.Conversation, a.Seq, a.Content, m.Content))
			}
		case "turn":
			t, err := st.GetTurn(ctx, org, a.Turn)
			if err != nil || t.Status != store.TurnDone {
				missing = append(missing, fmt.Sprintf("turn %s (%q, %v)", a.Turn, t.Status, err))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d of %d acknowledged writes lost, first: %s", len(missing), len(acks), missing[0])
	}
	return nil
}

// IntegrityCheck runs SQLite's PRAGMA integrity_check on the data
// folder's database and returns its answer ("ok" when sound).
func IntegrityCheck(tb testing.TB, data string) string {
	tb.Helper()
	db, err := sql.Open("sqlite", filepath.Join(data, sqlite.FileName))
	if err != nil {
		tb.Fatalf("replicatest: open the SQLite file: %v", err)
	}
	defer db.Close()
	var rows []string
	r, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		tb.Fatalf("replicatest: integrity_check: %v", err)
	}
	defer r.Close()
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			tb.Fatalf("replicatest: integrity_check: %v", err)
		}
		rows = append(rows, s)
	}
	if err := r.Err(); err != nil {
		tb.Fatalf("replicatest: integrity_check: %v", err)
	}
	return strings.Join(rows, "\n")
}

// String is the acknowledgement's line as the writer prints it:
// "message CONV SEQ CONTENT" or "turn ID".
func (a Ack) String() string {
	if a.Kind == "turn" {
		return "turn " + a.Turn
	}
	return fmt.Sprintf("message %s %d %s", a.Conversation, a.Seq, a.Content)
}

// parseAck reads a line String wrote.
func parseAck(s string) (Ack, error) {
	f := strings.Fields(s)
	switch {
	case len(f) == 2 && f[0] == "turn":
		return Ack{Kind: "turn", Turn: f[1]}, nil
	case len(f) == 4 && f[0] == "message":
		seq, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return Ack{}, fmt.Errorf("ack %q: %w", s, err)
		}
		return Ack{Kind: "message", Conversation: f[1], Seq: seq, Content: f[3]}, nil
	}
	return Ack{}, fmt.Errorf("not an acknowledgement: %q", s)
}

// runWriter is the writer child: it writes until killed, and returns 1
// (its exit status) at the first failed write.
func runWriter() int {
	var cfg writerConfig
	if err := json.Unmarshal([]byte(os.Getenv(envWriter)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 2
	}
	ctx := context.Background()
	st, err := backend.Open(ctx, backend.Config{URL: cfg.URL, Dir: cfg.Dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer: open:", err)
		return 1
	}
	var out sync.Mutex
	// ack writes the lines in one write(2), unbuffered: once it returns
	// they are in the pipe, and a SIGKILL after cannot take them back.
	ack := func(acks ...Ack) {
		var b strings.Builder
		for _, a := range acks {
			b.WriteString(a.String() + "\n")
		}
		out.Lock()
		defer out.Unlock()
		os.Stdout.WriteString(b.String())
	}
	failed := make(chan error, cfg.Workers)
	for i := range cfg.Workers {
		go func() { failed <- writeLoop(ctx, st, cfg, i, ack) }()
	}
	err = <-failed
	fmt.Fprintln(os.Stderr, "writer:", err)
	return 1
}

// writeLoop is worker i: in turn, one message, a batch of two, a turn,
// and again, until a write fails.
func writeLoop(ctx context.Context, st store.Store, cfg writerConfig, i int, ack func(...Ack)) error {
	conv := writerConversation(cfg, i)
	for n := 0; ; n++ {
		now := time.Now().UTC()
		content := fmt.Sprintf("w%d-n%d", i, n)
		msg := func(role, suffix string) store.Message {
			return store.Message{ConversationID: conv, TurnID: fmt.Sprintf("%s-t%d", conv, n), Role: role, Content: content + suffix, CreatedAt: now}
		}
		switch n % 3 {
		case 0:
			seq, err := st.AppendMessage(ctx, cfg.Org, msg("user", ""))
			if err != nil {
				return fmt.Errorf("append message: %w", err)
			}
			ack(Ack{Kind: "message", Conversation: conv, Seq: seq, Content: content})
		case 1:
			ms := []store.Message{msg("assistant", "-a"), msg("tool", "-b")}
			seqs, err := st.AppendMessages(ctx, cfg.Org, ms)
			if err != nil {
				return fmt.Errorf("append messages: %w", err)
			}
			ack(Ack{Kind: "message", Conversation: conv, Seq: seqs[0], Content: ms[0].Content},
				Ack{Kind: "message", Conversation: conv, Seq: seqs[1], Content: ms[1].Content})
		case 2:
			t := store.Turn{ID: fmt.Sprintf("%s-t%d", conv, n), OrgID: cfg.Org, UserID: cfg.User, ConversationID: conv,
				Agent: "assistant", Model: "openai:gpt-test", Tools: []string{"calculate"}, Status: store.TurnDone,
				Steps: 1, StartedAt: now, EndedAt: now}
			if err := st.PutTurn(ctx, t); err != nil {
				return fmt.Errorf("put turn: %w", err)
			}
			ack(Ack{Kind: "turn", Turn: t.ID})
		}
	}
}
