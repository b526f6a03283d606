package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/internal/eventwait"
)

// deleteBatch is how many events one DeleteTurnEventsBefore statement
// deletes, so that retention never holds a long transaction.
const deleteBatch = 1000

// AppendTurnEvents inserts evs and notifies the turn's waiters in one
// statement, so one transaction: the unique key (org_id, turn_id, seq)
// refuses a Seq stored already, by any process, and the failing statement
// keeps no row of the batch. pg_notify's message is queued in the
// transaction and delivered, to every replica's listener, only when it
// commits: a reader woken by it finds the events.
func (s *Store) AppendTurnEvents(ctx context.Context, orgID, conversationID, turnID string, evs []store.TurnEvent) error {
	if err := store.CheckTurnEvents(orgID, conversationID, turnID, evs); err != nil {
		return wrapErr("append turn events", err)
	}
	if len(evs) == 0 {
		return nil
	}
	seqs := make([]int64, len(evs))
	kinds := make([]string, len(evs))
	data := make([][]byte, len(evs))
	created := make([]time.Time, len(evs))
	for i, ev := range evs {
		seqs[i], kinds[i], data[i], created[i] = ev.Seq, ev.Kind, ev.Data, ev.CreatedAt
		if data[i] == nil {
			data[i] = []byte{} // bytea NOT NULL: nil would be NULL
		}
	}
	// A data-modifying WITH runs to completion whether or not the main
	// query reads it.
	const q = `WITH inserted AS (
			INSERT INTO turn_events (org_id, turn_id, seq, conversation_id, kind, data, created_at)
			SELECT $1, $2, e.seq, $3, e.kind, e.data, e.created_at
			FROM unnest($4::bigint[], $5::text[], $6::bytea[], $7::timestamptz[])
				AS e(seq, kind, data, created_at)
		)
		SELECT pg_notify($8, $9)`
	payload := notifyPayload(orgID, turnID, seqs[len(seqs)-1])
	if _, err := s.pool.Exec(ctx, q, orgID, turnID, conversationID, seqs, kinds, data, created,
		notifyChannel, payload); err != nil {
		return wrapErr("append turn events", err)
	}
	return nil
}

// ListTurnEvents reads one page of the turn's events in one query: the
// innermost select takes at most limit events, in Seq order from the
// primary key, and the running sum of their data's length cuts the page
// at store.MaxTurnEventsPageBytes. A large value is TOASTed, and
// octet_length reads its stored size: the data of an event cut off is
// never fetched, nor sent.
func (s *Store) ListTurnEvents(ctx context.Context, orgID, turnID string, after int64, limit int) ([]store.TurnEvent, error) {
	const q = `SELECT seq, kind, data, created_at FROM (
			SELECT seq, kind, data, created_at,
				SUM(octet_length(data)) OVER (ORDER BY seq) - octet_length(data) AS prior
			FROM (
				SELECT seq, kind, data, created_at FROM turn_events
				WHERE org_id = $1 AND turn_id = $2 AND seq > $3
				ORDER BY seq LIMIT $4) head
		) page
		WHERE prior = 0 OR prior + octet_length(data) <= $5
		ORDER BY seq`
	rows, err := s.pool.Query(ctx, q, orgID, turnID, after, store.TurnEventsLimit(limit), store.MaxTurnEventsPageBytes)
	if err != nil {
		return nil, wrapErr("list turn events", err)
	}
	evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.TurnEvent, error) {
		var ev store.TurnEvent
		err := row.Scan(&ev.Seq, &ev.Kind, &ev.Data, &ev.CreatedAt)
		ev.CreatedAt = utc(ev.CreatedAt)
		return ev, err
	})
	if err != nil {
		return nil, wrapErr("list turn events", err)
	}
	return evs, nil
}

// LastTurnEventSeq reads the turn's highest Seq in one query, which the
// primary key (org_id, turn_id, seq) answers from its last entry for the
// turn (PostgreSQL plans MAX over an index prefix as one backward index
// step).
func (s *Store) LastTurnEventSeq(ctx context.Context, orgID, turnID string) (int64, error) {
	const q = `SELECT COALESCE(MAX(seq), 0) FROM turn_events WHERE org_id = $1 AND turn_id = $2`
	var seq int64
	if err := s.pool.QueryRow(ctx, q, orgID, turnID).Scan(&seq); err != nil {
		return 0, wrapErr("last turn event seq", err)
	}
	return seq, nil
}

// WaitTurnEvents waits on this process's Hub, which the Store's one
// listening connection wakes on every append's notification, from any
// replica. It registers, then reads the table, then waits: an append that
// committed before the read is found by it, and one that commits after is
// notified. A notification lost with a dropped connection is made up for
// by the read again that the listener asks every waiter for once it
// listens again.
func (s *Store) WaitTurnEvents(ctx context.Context, orgID, turnID string, after int64) error {
	s.events.start(s.listenConfig)
	if err := s.events.hub.Wait(ctx, eventwait.Key(orgID, turnID), after, s.hasTurnEvents(orgID, turnID, after)); err != nil {
		return wrapErr("wait turn events", err)
	}
	return nil
}

// listenConfig is the configuration of the listening connection: the
// pool's (a copy), so it reaches the same server as the same user.
func (s *Store) listenConfig() *pgx.ConnConfig { return s.pool.Config().ConnConfig }

// hasTurnEvents returns the check that the turn has an event after seq.
func (s *Store) hasTurnEvents(orgID, turnID string, after int64) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		const q = `SELECT EXISTS (SELECT 1 FROM turn_events
			WHERE org_id = $1 AND turn_id = $2 AND seq > $3)`
		var ok bool
		err := s.pool.QueryRow(ctx, q, orgID, turnID, after).Scan(&ok)
		return ok, err
	}
}

// DeleteTurnEventsBefore deletes old events deleteBatch at a time, each
// batch one statement (its own transaction). Replicas deleting at once
// may split the rows between them; each row is counted once.
func (s *Store) DeleteTurnEventsBefore(ctx context.Context, before time.Time) (int, error) {
	const q = `DELETE FROM turn_events WHERE (org_id, turn_id, seq) IN (
		SELECT org_id, turn_id, seq FROM turn_events WHERE created_at < $1 LIMIT $2)`
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, q, before, deleteBatch)
		if err != nil {
			return total, wrapErr("delete turn events", err)
		}
		n := int(tag.RowsAffected())
		total += n
		if n < deleteBatch {
			return total, nil
		}
	}
}
