package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/quiverhq/quiver/store"
)

// The bounds of IntentSettings.HistoryTurns; -1 means not set.
const (
	minHistoryTurns = -1
	maxHistoryTurns = 10
)

// defaultUserIntentMode is a user's mode when none is stored.
const defaultUserIntentMode = "follow"

// userIntentModes are the modes SetUserIntentMode stores. They repeat the
// intent package's, which depends on this layer and not the reverse.
var userIntentModes = []string{"off", defaultUserIntentMode, "on"}

// GetIntentSettings returns the organisation's settings, or, when it never
// saved any, {OrgID: orgID, Enabled: false, HistoryTurns: -1, GateAlwaysOn:
// false} with a zero UpdatedAt and no error.
func (s *Store) GetIntentSettings(ctx context.Context, orgID string) (store.IntentSettings, error) {
	const q = `SELECT enabled, history_turns, gate_always_on, classifier_shift, updated_at FROM intent_settings
		WHERE org_id = ?`
	set := store.IntentSettings{OrgID: orgID}
	var updatedAt string
	err := s.reader.QueryRowContext(ctx, q, orgID).Scan(&set.Enabled, &set.HistoryTurns, &set.GateAlwaysOn, &set.ClassifierShift, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return store.IntentSettings{OrgID: orgID, HistoryTurns: minHistoryTurns}, nil
	}
	if err == nil {
		set.UpdatedAt, err = decodeTime(updatedAt)
	}
	if err != nil {
		return store.IntentSettings{}, fmt.Errorf("sqlite: get intent settings: %w", err)
	}
	return set, nil
}

// PutIntentSettings inserts or replaces the organisation's settings. A
// HistoryTurns outside -1..10 is an error and writes nothing.
func (s *Store) PutIntentSettings(ctx context.Context, set store.IntentSettings) error {
	if set.HistoryTurns < minHistoryTurns || set.HistoryTurns > maxHistoryTurns {
		return fmt.Errorf("sqlite: put intent settings: history turns %d, want %d to %d",
			set.HistoryTurns, minHistoryTurns, maxHistoryTurns)
	}
	if c := set.ClassifierShift; c != nil && (*c < store.MinClassifierShift || *c > store.MaxClassifierShift) {
		return fmt.Errorf("sqlite: put intent settings: classifier shift %d hundredths, want %d to %d",
			*c, store.MinClassifierShift, store.MaxClassifierShift)
	}
	const q = `INSERT INTO intent_settings (org_id, enabled, history_turns, gate_always_on, classifier_shift, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id) DO UPDATE SET
			enabled = excluded.enabled,
			history_turns = excluded.history_turns,
			gate_always_on = excluded.gate_always_on,
			classifier_shift = excluded.classifier_shift,
			updated_at = excluded.updated_at`
	_, err := s.writer.ExecContext(ctx, q, set.OrgID, set.Enabled, set.HistoryTurns,
		set.GateAlwaysOn, set.ClassifierShift, encodeTime(set.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: put intent settings: %w", err)
	}
	return nil
}

// AddIntentTrigger stores trig, or writes nothing and returns, wrapped, the
// first rule it would break: store.ErrTriggerExists, then
// store.ErrTriggerLimit (limit <= 0 means no limit). An empty target or
// phrase is an error.
func (s *Store) AddIntentTrigger(ctx context.Context, trig store.IntentTrigger, limit int) error {
	if trig.Target == "" || trig.Phrase == "" {
		return errors.New("sqlite: add intent trigger: empty target or phrase")
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := checkAddTrigger(ctx, tx, trig, limit); err != nil {
			return err
		}
		const q = `INSERT INTO intent_triggers (org_id, target, phrase, created_at)
			VALUES (?, ?, ?, ?)`
		_, err := tx.ExecContext(ctx, q, trig.OrgID, trig.Target, trig.Phrase,
			encodeTime(trig.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: add intent trigger: %w", err)
	}
	return nil
}

// checkAddTrigger returns the sentinel error of the first rule trig would
// break in its organisation, or nil.
func checkAddTrigger(ctx context.Context, tx *sql.Tx, trig store.IntentTrigger, limit int) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM intent_triggers
				WHERE org_id = ?1 AND target = ?2 AND phrase = ?3),
			(SELECT count(*) FROM intent_triggers WHERE org_id = ?1 AND target = ?2)`
	var exists bool
	var n int
	if err := tx.QueryRowContext(ctx, q, trig.OrgID, trig.Target, trig.Phrase).Scan(&exists, &n); err != nil {
		return err
	}
	if exists {
		return store.ErrTriggerExists
	}
	if limit > 0 && n >= limit {
		return store.ErrTriggerLimit
	}
	return nil
}

// RemoveIntentTrigger deletes the trigger, freeing its place under the
// target's limit, or returns an error wrapping store.ErrNotFound.
func (s *Store) RemoveIntentTrigger(ctx context.Context, orgID, target, phrase string) error {
	const q = `DELETE FROM intent_triggers WHERE org_id = ? AND target = ? AND phrase = ?`
	res, err := s.writer.ExecContext(ctx, q, orgID, target, phrase)
	if err != nil {
		return fmt.Errorf("sqlite: remove intent trigger: %w", err)
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: remove intent trigger: %w", err)
	}
	return nil
}

// ListIntentTriggers returns the organisation's triggers ordered by target,
// then phrase, byte by byte; none and no error for an organisation without
// triggers.
func (s *Store) ListIntentTriggers(ctx context.Context, orgID string) ([]store.IntentTrigger, error) {
	trigs, err := s.listIntentTriggers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list intent triggers: %w", err)
	}
	return trigs, nil
}

// listIntentTriggers reads the organisation's triggers on the readers.
func (s *Store) listIntentTriggers(ctx context.Context, orgID string) ([]store.IntentTrigger, error) {
	const q = `SELECT target, phrase, created_at FROM intent_triggers
		WHERE org_id = ? ORDER BY target, phrase`
	rows, err := s.reader.QueryContext(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var trigs []store.IntentTrigger
	for rows.Next() {
		trig := store.IntentTrigger{OrgID: orgID}
		var createdAt string
		if err := rows.Scan(&trig.Target, &trig.Phrase, &createdAt); err != nil {
			return nil, err
		}
		if trig.CreatedAt, err = decodeTime(createdAt); err != nil {
			return nil, err
		}
		trigs = append(trigs, trig)
	}
	return trigs, rows.Err()
}

// GetUserIntentMode returns the user's stored mode in the organisation, or
// "follow" when none is stored.
func (s *Store) GetUserIntentMode(ctx context.Context, orgID, userID string) (string, error) {
	const q = `SELECT mode FROM intent_user_modes WHERE org_id = ? AND user_id = ?`
	var mode string
	err := s.reader.QueryRowContext(ctx, q, orgID, userID).Scan(&mode)
	if errors.Is(err, sql.ErrNoRows) {
		return defaultUserIntentMode, nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: get user intent mode: %w", err)
	}
	return mode, nil
}

// SetUserIntentMode stores the user's mode in the organisation, replacing
// any before. A mode other than "off", "follow" or "on" ("" included) is
// an error and writes nothing.
func (s *Store) SetUserIntentMode(ctx context.Context, orgID, userID, mode string) error {
	if !slices.Contains(userIntentModes, mode) {
		return fmt.Errorf("sqlite: set user intent mode: mode %q, want off, follow or on", mode)
	}
	const q = `INSERT INTO intent_user_modes (org_id, user_id, mode) VALUES (?, ?, ?)
		ON CONFLICT (org_id, user_id) DO UPDATE SET mode = excluded.mode`
	if _, err := s.writer.ExecContext(ctx, q, orgID, userID, mode); err != nil {
		return fmt.Errorf("sqlite: set user intent mode: %w", err)
	}
	return nil
}

// OpenIntentTargets appends to the conversation's open targets in the
// organisation those of targets it does not hold yet, in the given order (a
// target repeated in targets opens once), and returns every open target in
// the order it first opened. With targets empty, or all of them open
// already, it only reads and takes no write lock: the common turn opens
// nothing new. A conversation never seen holds none. An empty target is an
// error and writes nothing.
func (s *Store) OpenIntentTargets(ctx context.Context, orgID, conversationID string, targets []string) ([]string, error) {
	if slices.Contains(targets, "") {
		return nil, errors.New("sqlite: open intent targets: empty target")
	}
	open, err := readOpenTargets(ctx, s.reader, orgID, conversationID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open intent targets: %w", err)
	}
	if len(unopened(open, targets)) == 0 {
		return open, nil
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		// Read again under the write lock: a concurrent call may have
		// opened some of targets since, and its order stands.
		held, err := readOpenTargets(ctx, tx, orgID, conversationID)
		if err != nil {
			return err
		}
		open, err = appendOpenTargets(ctx, tx, orgID, conversationID, held, unopened(held, targets))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: open intent targets: %w", err)
	}
	return open, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readOpenTargets returns the conversation's open targets in open order.
func readOpenTargets(ctx context.Context, db querier, orgID, conversationID string) ([]string, error) {
	const q = `SELECT target FROM conversation_intent_targets
		WHERE org_id = ? AND conversation_id = ? ORDER BY position`
	rows, err := db.QueryContext(ctx, q, orgID, conversationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var open []string
	for rows.Next() {
		var target string
		if err := rows.Scan(&target); err != nil {
			return nil, err
		}
		open = append(open, target)
	}
	return open, rows.Err()
}

// unopened returns the targets not in open, each once, in targets' order.
func unopened(open, targets []string) []string {
	var fresh []string
	for _, t := range targets {
		if !slices.Contains(open, t) && !slices.Contains(fresh, t) {
			fresh = append(fresh, t)
		}
	}
	return fresh
}

// appendOpenTargets stores fresh after held, numbering on from held's
// length, and returns them together.
func appendOpenTargets(ctx context.Context, tx *sql.Tx, orgID, conversationID string, held, fresh []string) ([]string, error) {
	const q = `INSERT INTO conversation_intent_targets
			(org_id, conversation_id, target, position)
		VALUES (?, ?, ?, ?)`
	for i, target := range fresh {
		if _, err := tx.ExecContext(ctx, q, orgID, conversationID, target, len(held)+i); err != nil {
			return nil, err
		}
	}
	return append(held, fresh...), nil
}
