package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/internal/eventwait"
)

// deleteBatch is how many events one DeleteTurnEventsBefore statement
// deletes: each batch is a short write transaction, so retention never
// keeps the writer from a running turn's appends for long.
const deleteBatch = 1000

// AppendTurnEvents inserts evs in one transaction and, once it committed,
// wakes this process's waiters on the turn: SQLite has one process, so
// an in-process broadcast reaches every reader.
func (s *Store) AppendTurnEvents(ctx context.Context, orgID, conversationID, turnID string, evs []store.TurnEvent) error {
	if err := store.CheckTurnEvents(orgID, conversationID, turnID, evs); err != nil {
		return fmt.Errorf("sqlite: append turn events: %w", err)
	}
	if len(evs) == 0 {
		return nil
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		return insertTurnEvents(ctx, tx, orgID, conversationID, turnID, evs)
	})
	if err != nil {
		return fmt.Errorf("sqlite: append turn events: %w", err)
	}
	s.waiters.Notify(eventwait.Key(orgID, turnID), evs[len(evs)-1].Seq)
	return nil
}

// insertTurnEvents inserts evs; a Seq already stored is store.ErrExists,
// and the caller's rollback keeps nothing of the batch.
func insertTurnEvents(ctx context.Context, tx *sql.Tx, orgID, conversationID, turnID string, evs []store.TurnEvent) error {
	const q = `INSERT INTO turn_events (org_id, turn_id, seq, conversation_id, kind, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, ev := range evs {
		data := ev.Data
		if data == nil {
			data = []byte{} // a blob, never NULL
		}
		res, err := stmt.ExecContext(ctx, orgID, turnID, ev.Seq, conversationID, ev.Kind, data, encodeTime(ev.CreatedAt))
		if err == nil {
			err = changedOr(res, store.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("seq %d: %w", ev.Seq, err)
		}
	}
	return nil
}

// ListTurnEvents reads one page of the turn's events in one query: the
// innermost select takes at most limit Seqs with their data's length
// (which SQLite reads without loading the data), the running sum over
// those lengths cuts the page at store.MaxTurnEventsPageBytes, and only
// then is the data of the events kept read.
func (s *Store) ListTurnEvents(ctx context.Context, orgID, turnID string, after int64, limit int) ([]store.TurnEvent, error) {
	const q = `SELECT e.seq, e.kind, e.data, e.created_at FROM (
			SELECT seq, len, SUM(len) OVER (ORDER BY seq) - len AS prior FROM (
				SELECT seq, length(data) AS len FROM turn_events
				WHERE org_id = ?1 AND turn_id = ?2 AND seq > ?3
				ORDER BY seq LIMIT ?4)
		) page
		JOIN turn_events e ON e.org_id = ?1 AND e.turn_id = ?2 AND e.seq = page.seq
		WHERE page.prior = 0 OR page.prior + page.len <= ?5
		ORDER BY e.seq`
	rows, err := s.reader.QueryContext(ctx, q, orgID, turnID, after,
		store.TurnEventsLimit(limit), store.MaxTurnEventsPageBytes)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list turn events: %w", err)
	}
	evs, err := scanTurnEvents(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list turn events: %w", err)
	}
	return evs, nil
}

// scanTurnEvents reads rows of (seq, kind, data, created_at) and closes
// rows.
func scanTurnEvents(rows *sql.Rows) ([]store.TurnEvent, error) {
	defer rows.Close()
	var evs []store.TurnEvent
	for rows.Next() {
		var ev store.TurnEvent
		var created string
		if err := rows.Scan(&ev.Seq, &ev.Kind, &ev.Data, &created); err != nil {
			return nil, err
		}
		var err error
		if ev.CreatedAt, err = decodeTime(created); err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	return evs, rows.Err()
}

// LastTurnEventSeq reads the turn's highest Seq in one query, which the
// primary key (org_id, turn_id, seq) answers from its last entry.
func (s *Store) LastTurnEventSeq(ctx context.Context, orgID, turnID string) (int64, error) {
	const q = `SELECT COALESCE(MAX(seq), 0) FROM turn_events WHERE org_id = ? AND turn_id = ?`
	var seq int64
	if err := s.reader.QueryRowContext(ctx, q, orgID, turnID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("sqlite: last turn event seq: %w", err)
	}
	return seq, nil
}

// WaitTurnEvents waits on this process's Hub, reading the table when it
// registered and whenever told to look again.
func (s *Store) WaitTurnEvents(ctx context.Context, orgID, turnID string, after int64) error {
	has := func(ctx context.Context) (bool, error) {
		const q = `SELECT EXISTS (SELECT 1 FROM turn_events WHERE org_id = ? AND turn_id = ? AND seq > ?)`
		var ok bool
		err := s.reader.QueryRowContext(ctx, q, orgID, turnID, after).Scan(&ok)
		return ok, err
	}
	if err := s.waiters.Wait(ctx, eventwait.Key(orgID, turnID), after, has); err != nil {
		return fmt.Errorf("sqlite: wait turn events: %w", err)
	}
	return nil
}

// DeleteTurnEventsBefore deletes old events deleteBatch at a time, each
// batch one statement (its own transaction).
func (s *Store) DeleteTurnEventsBefore(ctx context.Context, before time.Time) (int, error) {
	const q = `DELETE FROM turn_events WHERE rowid IN (
		SELECT rowid FROM turn_events WHERE created_at < ? LIMIT ?)`
	total := 0
	for {
		res, err := s.writer.ExecContext(ctx, q, encodeTime(before), deleteBatch)
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return total, fmt.Errorf("sqlite: delete turn events: %w", err)
		}
		total += int(n)
		if n < deleteBatch {
			return total, nil
		}
	}
}
