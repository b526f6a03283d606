package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/internal/eventwait"
)

// testEvent is an event to append.
func testEvent(seq int64) []store.TurnEvent {
	return []store.TurnEvent{{Seq: seq, Kind: "text", Data: []byte(`{"t":"x"}`), CreatedAt: time.Unix(1_700_000_000, 0)}}
}

// watchListener sets a hook on s's listener that reports each LISTEN
// that took effect, before anything starts it.
func watchListener(s *Store) <-chan struct{} {
	listening := make(chan struct{}, 8)
	s.events.onListen = func() { listening <- struct{}{} }
	return listening
}

// countingCheck returns s's table check for the turn that also reports
// each read on calls, once the read is done (so a caller that received
// knows the read saw nothing that came later).
func countingCheck(s *Store, orgID, turnID string, after int64, calls chan<- struct{}) func(context.Context) (bool, error) {
	has := s.hasTurnEvents(orgID, turnID, after)
	return func(ctx context.Context) (bool, error) {
		ok, err := has(ctx)
		calls <- struct{}{}
		return ok, err
	}
}

// TestWaitWokenByAnotherStore: two Stores on one database are two
// replicas; a waiter on one, registered and past its first read, is woken
// by an append through the other, by the notification alone (its check
// runs once).
func TestWaitWokenByAnotherStore(t *testing.T) {
	url := pgtest.URL(t)
	reader, writer := openTest(t, url), openTest(t, url)
	listening := watchListener(reader)
	reader.events.start(reader.listenConfig)
	<-listening
	checks := make(chan struct{}, 8)
	done := make(chan error, 1)
	go func() {
		done <- reader.events.hub.Wait(t.Context(), eventwait.Key("org", "turn"), 0,
			countingCheck(reader, "org", "turn", 0, checks))
	}()
	<-checks // registered, and found nothing
	if err := writer.AppendTurnEvents(t.Context(), "org", "conv", "turn", testEvent(1)); err != nil {
		t.Fatalf("AppendTurnEvents: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	if n := len(checks); n != 0 {
		t.Errorf("the waiter read the table %d more times, want it woken by the notification", n)
	}
}

// TestWaitAcrossStores: WaitTurnEvents through one Store returns after an
// append through another, whichever comes first.
func TestWaitAcrossStores(t *testing.T) {
	url := pgtest.URL(t)
	reader, writer := openTest(t, url), openTest(t, url)
	done := make(chan error, 1)
	go func() { done <- reader.WaitTurnEvents(t.Context(), "org", "turn", 0) }()
	if err := writer.AppendTurnEvents(t.Context(), "org", "conv", "turn", testEvent(1)); err != nil {
		t.Fatalf("AppendTurnEvents: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("WaitTurnEvents = %v, want nil", err)
	}
}

// TestWaitSurvivesLostListener: the listening connection is killed, an
// event is stored while no connection listens (so no wake-up reaches this
// Store), and the listener reconnects: the waiter reads the table again
// and returns.
func TestWaitSurvivesLostListener(t *testing.T) {
	url := pgtest.URL(t)
	reader, writer := openTest(t, url), openTest(t, url)
	listening := watchListener(reader)
	down, release := make(chan struct{}, 1), make(chan struct{})
	reader.events.beforeRetry = func(ctx context.Context) {
		down <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
	reader.events.start(reader.listenConfig)
	<-listening
	checks := make(chan struct{}, 8)
	done := make(chan error, 1)
	go func() {
		done <- reader.events.hub.Wait(t.Context(), eventwait.Key("org", "turn"), 0,
			countingCheck(reader, "org", "turn", 0, checks))
	}()
	<-checks
	killListener(t, writer)
	<-down
	// Stored without a notification: one sent now could still reach the
	// next session (PostgreSQL may hand a new listener what was queued
	// just before it listened), and the point is the one that is lost.
	const insert = `INSERT INTO turn_events (org_id, turn_id, seq, conversation_id, kind, data, created_at)
		VALUES ('org', 'turn', 1, 'conv', 'text', '{}', now())`
	if _, err := writer.pool.Exec(t.Context(), insert); err != nil {
		t.Fatalf("insert an event: %v", err)
	}
	close(release)
	<-listening
	if err := <-done; err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	if n := len(checks); n != 1 {
		t.Errorf("the waiter read the table %d more times, want once, after the reconnection", n)
	}
}

// killListener terminates the listening connection of every Store on the
// database s is on.
func killListener(t *testing.T, s *Store) {
	t.Helper()
	const q = `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`
	var n int
	if err := s.pool.QueryRow(t.Context(), q, listenerName).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminate the listening connection: %d terminated, %v; want 1", n, err)
	}
}

// TestCloseEndsWaiters: a waiter on a Store being closed returns an
// error instead of waiting on.
func TestCloseEndsWaiters(t *testing.T) {
	s, err := Open(t.Context(), pgtest.URL(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	listening := watchListener(s)
	s.events.start(s.listenConfig)
	<-listening
	checks := make(chan struct{}, 8)
	done := make(chan error, 1)
	go func() {
		done <- s.events.hub.Wait(t.Context(), eventwait.Key("org", "turn"), 0, countingCheck(s, "org", "turn", 0, checks))
	}()
	<-checks
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a closed Store = %v, want the store's error", err)
	}
}

// TestListenerIsOneConnection: however many waiters, a Store listens on
// one connection, outside its pool, and opens none before a wait.
func TestListenerIsOneConnection(t *testing.T) {
	url := pgtest.URL(t)
	s := openTest(t, url)
	count := func() int {
		const q = `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1`
		var n int
		if err := s.pool.QueryRow(t.Context(), q, listenerName).Scan(&n); err != nil {
			t.Fatalf("count listeners: %v", err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("%d listening connections before any wait, want 0", n)
	}
	listening := watchListener(s)
	ctx, cancel := context.WithCancel(t.Context())
	dones := make([]chan error, 5)
	for i := range dones {
		dones[i] = make(chan error, 1)
		go func() { dones[i] <- s.WaitTurnEvents(ctx, "org", "turn", 0) }()
	}
	<-listening
	if n := count(); n != 1 {
		t.Errorf("%d listening connections with 5 waiters, want 1", n)
	}
	cancel()
	for _, d := range dones {
		if err := <-d; !errors.Is(err, context.Canceled) {
			t.Errorf("WaitTurnEvents = %v, want context.Canceled", err)
		}
	}
}

// TestNotifyPayload: what an append sends is what the listener reads,
// and a payload of another format is refused.
func TestNotifyPayload(t *testing.T) {
	key := eventwait.Key("org", "turn")
	tests := []struct {
		name, payload string
		wantKey       string
		wantSeq       int64
		wantOK        bool
	}{
		{"Sent", notifyPayload("org", "turn", 42), key, 42, true},
		{"Empty", "", "", 0, false},
		{"NoSeq", key, "", 0, false},
		{"BadSeq", key + " x", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, seq, ok := parsePayload(tc.payload)
			if k != tc.wantKey || seq != tc.wantSeq || ok != tc.wantOK {
				t.Errorf("parsePayload(%q) = %q, %d, %v; want %q, %d, %v", tc.payload, k, seq, ok, tc.wantKey, tc.wantSeq, tc.wantOK)
			}
		})
	}
}
