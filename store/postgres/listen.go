package postgres

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quiverhq/quiver/store/internal/eventwait"
)

// notifyChannel is the channel AppendTurnEvents notifies and the listener
// listens on. Its payload is "<eventwait.Key> <highest Seq appended>".
const notifyChannel = "quiver_turn_events"

// listenerName is the listening connection's application_name, so that
// people (and tests) can find it in pg_stat_activity.
const listenerName = "quiver turn events"

// Timing of the listening connection.
const (
	// listenIdle is how long the listener waits for a notification before
	// it pings the server: a connection that died without a word (a
	// network partition) is found within about that long.
	listenIdle = 30 * time.Second
	// listenPing bounds that ping, and closing a connection.
	listenPing = 10 * time.Second
	// listenRetryMin and listenRetryMax bound the pause between attempts
	// to connect again, doubling from the first to the second.
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// listener is a Store's one LISTEN connection and the waiters it wakes.
// It starts with the first WaitTurnEvents (a process that never waits,
// such as the CLI, never opens it) and stops with Close. The connection is
// its own, outside the pool: it is held for the Store's life, and must be
// a session (a pooler in transaction mode cannot LISTEN).
type listener struct {
	hub eventwait.Hub

	mu      sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc
	done    chan struct{}

	// Test hooks, nil in production: onListen runs after each LISTEN took
	// effect (and the waiters were told to recheck); beforeRetry runs
	// after a connection failed, before the pause and the next attempt.
	onListen    func()
	beforeRetry func(ctx context.Context)
}

// start starts the listening goroutine, on connections configured as
// config returns (called once, then), unless it runs already or the
// listener was stopped.
func (l *listener) start(config func() *pgx.ConnConfig) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed {
		return
	}
	l.started = true
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	cfg := config()
	cfg.RuntimeParams["application_name"] = listenerName
	go l.run(ctx, cfg)
}

// stop ends the listening goroutine and waits for it; the listener does
// not start again.
func (l *listener) stop() {
	l.mu.Lock()
	l.closed = true
	started, cancel, done := l.started, l.cancel, l.done
	l.mu.Unlock()
	if started {
		cancel()
		<-done
	}
}

// run keeps a listening session open until ctx ends, connecting again,
// with a growing pause, whenever one fails.
func (l *listener) run(ctx context.Context, cfg *pgx.ConnConfig) {
	defer close(l.done)
	pause := listenRetryMin
	for {
		listened, err := l.session(ctx, cfg)
		if ctx.Err() != nil {
			return
		}
		if listened {
			pause = listenRetryMin // it worked for a while: retry soon
		}
		// pgconn's errors name the host, user and database, never the
		// password.
		slog.Warn("postgres: turn events: listening connection lost; reconnecting",
			"err", err, "retry_in", pause)
		if l.beforeRetry != nil {
			l.beforeRetry(ctx)
		}
		if !sleep(ctx, pause) {
			return
		}
		pause = min(2*pause, listenRetryMax)
	}
}

// session connects, listens, tells every waiter to read the table again
// (what was appended while no connection listened raised no wake-up), and
// then hands notifications to the Hub until the connection fails or ctx
// ends. It reports whether LISTEN took effect.
func (l *listener) session(ctx context.Context, cfg *pgx.ConnConfig) (bool, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenPing)
		defer cancel()
		conn.Close(cctx) //nolint:errcheck // closing a connection that may be broken
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return false, err
	}
	l.hub.RecheckAll()
	if l.onListen != nil {
		l.onListen()
	}
	for {
		if err := l.receive(ctx, conn); err != nil {
			return true, err
		}
	}
}

// receive waits up to listenIdle for a notification and hands it to the
// Hub; when none comes, it pings the server instead.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) error {
	wctx, cancel := context.WithTimeout(ctx, listenIdle)
	n, err := conn.WaitForNotification(wctx)
	cancel()
	switch {
	case err == nil:
		l.deliver(n.Payload)
		return nil
	case ctx.Err() != nil || !pgconn.Timeout(err):
		return err
	}
	// A timeout leaves the connection usable: check that the server is
	// still there.
	pctx, cancel := context.WithTimeout(ctx, listenPing)
	defer cancel()
	return conn.Ping(pctx)
}

// deliver hands one payload to the Hub; one of another format (nothing
// Quiver sends) is ignored.
func (l *listener) deliver(payload string) {
	if key, seq, ok := parsePayload(payload); ok {
		l.hub.Notify(key, seq)
	}
}

// parsePayload reads a payload notifyPayload made.
func parsePayload(payload string) (key string, seq int64, ok bool) {
	key, num, ok := strings.Cut(payload, " ")
	if !ok {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return key, seq, true
}

// notifyPayload is the payload announcing the turn's events up to seq.
func notifyPayload(orgID, turnID string, seq int64) string {
	return eventwait.Key(orgID, turnID) + " " + strconv.FormatInt(seq, 10)
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
