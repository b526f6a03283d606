package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Deliberate Tool Mode. Settings and user modes are single upserts. The
// rules that span rows are held, under concurrent writers in any number
// of processes, as follows:
//
//   - a trigger is stored once per (target, phrase): the primary key is
//     the referee;
//   - a target's trigger limit: AddIntentTrigger counts and inserts under
//     the advisory lock of (organisation, target) (lockIntentTriggers),
//     the only writer that adds a trigger;
//   - a conversation's open targets grow only by appending, numbered in
//     open order: OpenIntentTargets numbers and inserts under the advisory
//     lock of (organisation, conversation) (lockIntentTargets), so each
//     commit extends the list the previous one left, and every read, a
//     single statement, sees one of those lists: a prefix of the final.

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

// intentTriggersKey is the primary key of intent_triggers.
const intentTriggersKey = "intent_triggers_pkey"

// GetIntentSettings returns the organisation's settings, or, when it never
// saved any, {OrgID: orgID, Enabled: false, HistoryTurns: -1, GateAlwaysOn:
// false} with a zero UpdatedAt and no error.
func (s *Store) GetIntentSettings(ctx context.Context, orgID string) (store.IntentSettings, error) {
	const q = `SELECT enabled, history_turns, gate_always_on, classifier_shift, updated_at FROM intent_settings
		WHERE org_id = $1`
	set := store.IntentSettings{OrgID: orgID}
	err := s.pool.QueryRow(ctx, q, orgID).Scan(&set.Enabled, &set.HistoryTurns, &set.GateAlwaysOn, &set.ClassifierShift, &set.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.IntentSettings{OrgID: orgID, HistoryTurns: minHistoryTurns}, nil
	}
	if err != nil {
		return store.IntentSettings{}, wrapErr("get intent settings", err)
	}
	set.UpdatedAt = utc(set.UpdatedAt)
	return set, nil
}

// PutIntentSettings inserts or replaces the organisation's settings, in
// one statement. A HistoryTurns outside -1..10 is an error and writes
// nothing.
func (s *Store) PutIntentSettings(ctx context.Context, set store.IntentSettings) error {
	if set.HistoryTurns < minHistoryTurns || set.HistoryTurns > maxHistoryTurns {
		return fmt.Errorf("postgres: put intent settings: history turns %d, want %d to %d",
			set.HistoryTurns, minHistoryTurns, maxHistoryTurns)
	}
	if c := set.ClassifierShift; c != nil && (*c < store.MinClassifierShift || *c > store.MaxClassifierShift) {
		return fmt.Errorf("postgres: put intent settings: classifier shift %d hundredths, want %d to %d",
			*c, store.MinClassifierShift, store.MaxClassifierShift)
	}
	const q = `INSERT INTO intent_settings (org_id, enabled, history_turns, gate_always_on, classifier_shift, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (org_id) DO UPDATE SET
			enabled = excluded.enabled,
			history_turns = excluded.history_turns,
			gate_always_on = excluded.gate_always_on,
			classifier_shift = excluded.classifier_shift,
			updated_at = excluded.updated_at`
	_, err := s.pool.Exec(ctx, q, set.OrgID, set.Enabled, set.HistoryTurns, set.GateAlwaysOn, set.ClassifierShift, set.UpdatedAt)
	if err != nil {
		return wrapErr("put intent settings", err)
	}
	return nil
}

// AddIntentTrigger stores trig, or writes nothing and returns, wrapped, the
// first rule it would break: store.ErrTriggerExists, then
// store.ErrTriggerLimit (limit <= 0 means no limit). An empty target or
// phrase is an error.
func (s *Store) AddIntentTrigger(ctx context.Context, trig store.IntentTrigger, limit int) error {
	if trig.Target == "" || trig.Phrase == "" {
		return errors.New("postgres: add intent trigger: empty target or phrase")
	}
	// READ COMMITTED under the lock of (organisation, target): the count
	// read after the lock is granted includes every trigger a previous
	// holder committed, and no other writer adds one to the target until
	// this commits, so concurrent adds fill exactly the free places.
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockRule(ctx, tx, lockIntentTriggers, trig.OrgID, trig.Target); err != nil {
			return err
		}
		if err := checkAddTrigger(ctx, tx, trig, limit); err != nil {
			return err
		}
		const q = `INSERT INTO intent_triggers (org_id, target, phrase, created_at)
			VALUES ($1, $2, $3, $4)`
		_, err := tx.Exec(ctx, q, trig.OrgID, trig.Target, trig.Phrase, trig.CreatedAt)
		return err
	})
	if isUniqueViolation(err, intentTriggersKey) {
		err = store.ErrTriggerExists // a writer that took no lock won
	}
	if err != nil {
		return wrapErr("add intent trigger", err)
	}
	return nil
}

// checkAddTrigger returns the sentinel error of the first rule trig would
// break in its organisation, or nil.
func checkAddTrigger(ctx context.Context, tx pgx.Tx, trig store.IntentTrigger, limit int) error {
	const q = `SELECT
			EXISTS (SELECT 1 FROM intent_triggers
				WHERE org_id = $1 AND target = $2 AND phrase = $3),
			(SELECT count(*) FROM intent_triggers WHERE org_id = $1 AND target = $2)`
	var exists bool
	var n int
	if err := tx.QueryRow(ctx, q, trig.OrgID, trig.Target, trig.Phrase).Scan(&exists, &n); err != nil {
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
	const q = `DELETE FROM intent_triggers WHERE org_id = $1 AND target = $2 AND phrase = $3`
	tag, err := s.pool.Exec(ctx, q, orgID, target, phrase)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return wrapErr("remove intent trigger", err)
	}
	return nil
}

// ListIntentTriggers returns the organisation's triggers ordered by target,
// then phrase, byte by byte; none and no error for an organisation without
// triggers.
func (s *Store) ListIntentTriggers(ctx context.Context, orgID string) ([]store.IntentTrigger, error) {
	const q = `SELECT target, phrase, created_at FROM intent_triggers
		WHERE org_id = $1 ORDER BY target, phrase`
	rows, err := s.pool.Query(ctx, q, orgID)
	if err != nil {
		return nil, wrapErr("list intent triggers", err)
	}
	trigs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.IntentTrigger, error) {
		trig := store.IntentTrigger{OrgID: orgID}
		err := row.Scan(&trig.Target, &trig.Phrase, &trig.CreatedAt)
		trig.CreatedAt = utc(trig.CreatedAt)
		return trig, err
	})
	if err != nil {
		return nil, wrapErr("list intent triggers", err)
	}
	return trigs, nil
}

// GetUserIntentMode returns the user's stored mode in the organisation, or
// "follow" when none is stored.
func (s *Store) GetUserIntentMode(ctx context.Context, orgID, userID string) (string, error) {
	const q = `SELECT mode FROM intent_user_modes WHERE org_id = $1 AND user_id = $2`
	var mode string
	err := s.pool.QueryRow(ctx, q, orgID, userID).Scan(&mode)
	if errors.Is(err, pgx.ErrNoRows) {
		return defaultUserIntentMode, nil
	}
	if err != nil {
		return "", wrapErr("get user intent mode", err)
	}
	return mode, nil
}

// SetUserIntentMode stores the user's mode in the organisation, replacing
// any before, in one statement. A mode other than "off", "follow" or "on"
// ("" included) is an error and writes nothing.
func (s *Store) SetUserIntentMode(ctx context.Context, orgID, userID, mode string) error {
	if !slices.Contains(userIntentModes, mode) {
		return fmt.Errorf("postgres: set user intent mode: mode %q, want off, follow or on", mode)
	}
	const q = `INSERT INTO intent_user_modes (org_id, user_id, mode) VALUES ($1, $2, $3)
		ON CONFLICT (org_id, user_id) DO UPDATE SET mode = excluded.mode`
	if _, err := s.pool.Exec(ctx, q, orgID, userID, mode); err != nil {
		return wrapErr("set user intent mode", err)
	}
	return nil
}

// OpenIntentTargets appends to the conversation's open targets in the
// organisation those of targets it does not hold yet, in the given order (a
// target repeated in targets opens once), and returns every open target in
// the order it first opened. With targets empty, or all of them open
// already, it only reads, in one statement, and takes no lock: the common
// turn opens nothing new. A conversation never seen holds none. An empty
// target is an error and writes nothing.
func (s *Store) OpenIntentTargets(ctx context.Context, orgID, conversationID string, targets []string) ([]string, error) {
	if slices.Contains(targets, "") {
		return nil, errors.New("postgres: open intent targets: empty target")
	}
	open, err := readOpenTargets(ctx, s.pool, orgID, conversationID)
	if err != nil {
		return nil, wrapErr("open intent targets", err)
	}
	if len(unopened(open, targets)) == 0 {
		return open, nil
	}
	// READ COMMITTED under the conversation's lock: the list read after
	// the lock is granted is the one the previous holder committed, and
	// no other writer appends until this commits, so the positions run on
	// from it and each commit extends the last.
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockRule(ctx, tx, lockIntentTargets, orgID, conversationID); err != nil {
			return err
		}
		held, err := readOpenTargets(ctx, tx, orgID, conversationID)
		if err != nil {
			return err
		}
		open, err = appendOpenTargets(ctx, tx, orgID, conversationID, held, unopened(held, targets))
		return err
	})
	if err != nil {
		return nil, wrapErr("open intent targets", err)
	}
	return open, nil
}

// readOpenTargets returns the conversation's open targets in open order.
func readOpenTargets(ctx context.Context, db querier, orgID, conversationID string) ([]string, error) {
	const q = `SELECT target FROM conversation_intent_targets
		WHERE org_id = $1 AND conversation_id = $2 ORDER BY position`
	rows, err := db.Query(ctx, q, orgID, conversationID)
	if err != nil {
		return nil, err
	}
	open, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if len(open) == 0 {
		open = nil // none open: as a conversation never seen
	}
	return open, err
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
// length, in one statement, and returns them together.
func appendOpenTargets(ctx context.Context, tx pgx.Tx, orgID, conversationID string, held, fresh []string) ([]string, error) {
	if len(fresh) == 0 {
		return held, nil // a concurrent call opened them meanwhile
	}
	const q = `INSERT INTO conversation_intent_targets (org_id, conversation_id, target, position)
		SELECT $1, $2, t.target, $4 + t.n - 1
		FROM unnest($3::text[]) WITH ORDINALITY AS t (target, n)`
	if _, err := tx.Exec(ctx, q, orgID, conversationID, fresh, len(held)); err != nil {
		return nil, err
	}
	return append(held, fresh...), nil
}
