package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// memoryColumns are a memory's columns but its vector, in scanMemory's
// order.
const memoryColumns = `id, owner_id, text, model, created_at, updated_at`

// PutMemory validates m (store.CheckMemory), then, in one write
// transaction (SQLite's write lock held from BEGIN, so the count cannot
// change before the insert), refuses an ID taken in the organisation and
// an owner at its cap (store.MemoryLimit), and stores the memory and its
// full-text terms.
func (s *Store) PutMemory(ctx context.Context, m store.Memory, limit int64) (store.Memory, error) {
	m, err := store.CheckMemory(m)
	if err != nil {
		return store.Memory{}, fmt.Errorf("sqlite: put memory: %w", err)
	}
	m.UpdatedAt = m.CreatedAt
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM memories WHERE org_id = ? AND id = ?`, m.OrgID, m.ID).Scan(&one)
		switch {
		case err == nil:
			return fmt.Errorf("memory %q: %w", m.ID, store.ErrExists)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		n, err := countMemories(ctx, tx, m.OrgID, m.OwnerID)
		if err != nil {
			return err
		}
		if err := store.CheckMemoryCount(n, limit); err != nil {
			return err
		}
		const q = `INSERT INTO memories (org_id, id, owner_id, text, model, vector, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
		if _, err := tx.ExecContext(ctx, q, m.OrgID, m.ID, m.OwnerID, m.Text, m.Model, []byte(m.Vector),
			encodeTime(m.CreatedAt), encodeTime(m.UpdatedAt)); err != nil {
			return err
		}
		if err := bumpMemoryGeneration(ctx, tx, m.OrgID, m.OwnerID); err != nil {
			return err
		}
		return putMemoryTerms(ctx, tx, m)
	})
	if err != nil {
		return store.Memory{}, fmt.Errorf("sqlite: put memory: %w", err)
	}
	return m, nil
}

// bumpMemoryGeneration stamps a change of the owner's memories with a
// fresh generation (store.VectorCache), in the change's transaction.
func bumpMemoryGeneration(ctx context.Context, tx *sql.Tx, orgID, ownerID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memory_generations (org_id, owner_id, gen) VALUES (?, ?, ?)
		ON CONFLICT (org_id, owner_id) DO UPDATE SET gen = excluded.gen`, orgID, ownerID, store.NewGeneration())
	return err
}

// memoryGeneration reads the owner's generation; 0 when there is none.
func (s *Store) memoryGeneration(ctx context.Context, orgID, ownerID string) (int64, error) {
	var gen int64
	err := s.reader.QueryRowContext(ctx, `SELECT gen FROM memory_generations WHERE org_id = ? AND owner_id = ?`,
		orgID, ownerID).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return gen, err
}

// putMemoryTerms writes (or rewrites) the full-text row of m.
func putMemoryTerms(ctx context.Context, tx *sql.Tx, m store.Memory) error {
	if err := deleteMemoryTerms(ctx, tx, `org_id = ? AND memory_id = ?`, m.OrgID, m.ID); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO memory_search (terms, scope, org_id, owner_id, memory_id) VALUES (?, ?, ?, ?, ?)`,
		strings.Join(store.MemoryTerms(m.Text), " "), memorySearchScope(m.OrgID, m.OwnerID), m.OrgID, m.OwnerID, m.ID)
	if err != nil {
		return err
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO memory_search_rows (org_id, memory_id, search_id) VALUES (?, ?, ?)`,
		m.OrgID, m.ID, rowid)
	return err
}

// deleteMemoryTerms deletes the full-text rows of the memories
// memory_search_rows' where (never from input) selects.
func deleteMemoryTerms(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	q := `DELETE FROM memory_search WHERE rowid IN (SELECT search_id FROM memory_search_rows WHERE ` + where + `)`
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM memory_search_rows WHERE `+where, args...)
	return err
}

// rebuildMemorySearch writes the full-text rows of every memory, in tx:
// an import's last step (the derived rows are not archived).
func rebuildMemorySearch(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT org_id, id, owner_id, text FROM memories ORDER BY org_id, id`)
	if err != nil {
		return fmt.Errorf("rebuild memory search: %w", err)
	}
	var ms []store.Memory
	for rows.Next() {
		var m store.Memory
		if err := rows.Scan(&m.OrgID, &m.ID, &m.OwnerID, &m.Text); err != nil {
			rows.Close()
			return fmt.Errorf("rebuild memory search: %w", err)
		}
		ms = append(ms, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rebuild memory search: %w", err)
	}
	for _, m := range ms {
		if err := putMemoryTerms(ctx, tx, m); err != nil {
			return fmt.Errorf("rebuild memory search: %w", err)
		}
		if err := bumpMemoryGeneration(ctx, tx, m.OrgID, m.OwnerID); err != nil {
			return fmt.Errorf("rebuild memory search: %w", err)
		}
	}
	return nil
}

// UpdateMemory replaces the text, model and vector of the owner's memory
// and its full-text terms, in one write transaction.
func (s *Store) UpdateMemory(ctx context.Context, m store.Memory) (store.Memory, error) {
	m, err := store.CheckMemoryUpdate(m)
	if err != nil {
		return store.Memory{}, fmt.Errorf("sqlite: update memory: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		const q = `UPDATE memories SET text = ?, model = ?, vector = ?, updated_at = ?
			WHERE org_id = ? AND owner_id = ? AND id = ? RETURNING created_at`
		var created string
		err := tx.QueryRowContext(ctx, q, m.Text, m.Model, []byte(m.Vector), encodeTime(m.UpdatedAt),
			m.OrgID, m.OwnerID, m.ID).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if m.CreatedAt, err = decodeTime(created); err != nil {
			return err
		}
		if err := bumpMemoryGeneration(ctx, tx, m.OrgID, m.OwnerID); err != nil {
			return err
		}
		return putMemoryTerms(ctx, tx, m)
	})
	if err != nil {
		return store.Memory{}, fmt.Errorf("sqlite: update memory: %w", err)
	}
	return m, nil
}

// GetMemory returns the owner's memory with its vector.
func (s *Store) GetMemory(ctx context.Context, orgID, ownerID, id string) (store.Memory, error) {
	if err := ctx.Err(); err != nil {
		return store.Memory{}, fmt.Errorf("sqlite: get memory: %w", err)
	}
	if !validKeys(orgID, ownerID, id) {
		return store.Memory{}, fmt.Errorf("sqlite: get memory: %w", store.ErrNotFound)
	}
	row := s.reader.QueryRowContext(ctx, `SELECT `+memoryColumns+`, vector FROM memories
		WHERE org_id = ? AND owner_id = ? AND id = ?`, orgID, ownerID, id)
	m, err := scanMemory(row.Scan, orgID, true)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Memory{}, fmt.Errorf("sqlite: get memory: %w", err)
	}
	return m, nil
}

// validKeys reports whether every key could name a stored record.
func validKeys(keys ...string) bool {
	for _, k := range keys {
		if !store.ValidBlobKey(k) {
			return false
		}
	}
	return true
}

// scanMemory reads memoryColumns (and the vector when withVector).
func scanMemory(scan func(...any) error, orgID string, withVector bool) (store.Memory, error) {
	m := store.Memory{OrgID: orgID}
	var created, updated string
	dest := []any{&m.ID, &m.OwnerID, &m.Text, &m.Model, &created, &updated}
	var vec []byte
	if withVector {
		dest = append(dest, &vec)
	}
	if err := scan(dest...); err != nil {
		return store.Memory{}, err
	}
	var err error
	if m.CreatedAt, err = decodeTime(created); err != nil {
		return store.Memory{}, err
	}
	if m.UpdatedAt, err = decodeTime(updated); err != nil {
		return store.Memory{}, err
	}
	if withVector {
		m.Vector = embed.Packed(vec)
	}
	return m, nil
}

// ListMemories returns one page of the owner's memories, newest first.
func (s *Store) ListMemories(ctx context.Context, orgID, ownerID string, p store.MemoryPage) (store.MemoryList, error) {
	if err := ctx.Err(); err != nil {
		return store.MemoryList{}, fmt.Errorf("sqlite: list memories: %w", err)
	}
	if !validKeys(orgID, ownerID, p.BeforeID) {
		return store.MemoryList{}, nil
	}
	n := p.Size()
	q := `SELECT ` + memoryColumns + ` FROM memories WHERE org_id = ? AND owner_id = ?`
	args := []any{orgID, ownerID}
	if !p.BeforeCreatedAt.IsZero() || p.BeforeID != "" {
		q += ` AND (created_at, id) < (?, ?)`
		args = append(args, encodeTime(p.BeforeCreatedAt), p.BeforeID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, q, append(args, n+1)...)
	if err != nil {
		return store.MemoryList{}, fmt.Errorf("sqlite: list memories: %w", err)
	}
	defer rows.Close()
	var l store.MemoryList
	for rows.Next() {
		m, err := scanMemory(rows.Scan, orgID, false)
		if err != nil {
			return store.MemoryList{}, fmt.Errorf("sqlite: list memories: %w", err)
		}
		l.Memories = append(l.Memories, m)
	}
	if err := rows.Err(); err != nil {
		return store.MemoryList{}, fmt.Errorf("sqlite: list memories: %w", err)
	}
	if len(l.Memories) > n {
		l.Memories, l.More = l.Memories[:n], true
	}
	return l, nil
}

// DeleteMemory deletes the owner's memory and its full-text row.
func (s *Store) DeleteMemory(ctx context.Context, orgID, ownerID, id string) error {
	n, err := s.deleteMemories(ctx, func(tx *sql.Tx) error { return bumpMemoryGeneration(ctx, tx, orgID, ownerID) },
		`org_id = ? AND owner_id = ? AND id = ?`, orgID, ownerID, id)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete memory: %w", err)
	}
	return nil
}

// DeleteOwnerMemories deletes every memory of the owner.
func (s *Store) DeleteOwnerMemories(ctx context.Context, orgID, ownerID string) (int64, error) {
	if ownerID == "" {
		return 0, ctx.Err()
	}
	// The owner's generation goes with their memories: a segment
	// without one is never cached.
	n, err := s.deleteMemories(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM memory_generations WHERE org_id = ? AND owner_id = ?`, orgID, ownerID)
		return err
	}, `org_id = ? AND owner_id = ?`, orgID, ownerID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete owner memories: %w", err)
	}
	return n, nil
}

// DeleteOrgMemories deletes every memory of the organisation.
func (s *Store) DeleteOrgMemories(ctx context.Context, orgID string) (int64, error) {
	n, err := s.deleteMemories(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM memory_generations WHERE org_id = ?`, orgID)
		return err
	}, `org_id = ?`, orgID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete org memories: %w", err)
	}
	return n, nil
}

// deleteMemories deletes the memories where (never from input) selects,
// with their full-text rows, and runs gens (what the deletion does to
// the owners' generations), in one write transaction.
func (s *Store) deleteMemories(ctx context.Context, gens func(*sql.Tx) error, where string, args ...any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, a := range args {
		if !store.ValidBlobKey(a.(string)) {
			return 0, nil
		}
	}
	var n int64
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if n, err = deleteMemoryRows(ctx, tx, where, args...); err != nil || n == 0 {
			return err
		}
		return gens(tx)
	})
	return n, err
}

// deleteMemoryRows deletes, in tx, the memories where (never from input)
// selects with their full-text rows, and returns how many.
func deleteMemoryRows(ctx context.Context, tx *sql.Tx, where string, args ...any) (int64, error) {
	if err := deleteMemoryTerms(ctx, tx, `(org_id, memory_id) IN (SELECT org_id, id FROM memories WHERE `+where+`)`, args...); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE `+where, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// CountMemories returns how many memories the owner holds.
func (s *Store) CountMemories(ctx context.Context, orgID, ownerID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: count memories: %w", err)
	}
	if !validKeys(orgID, ownerID) {
		return 0, nil
	}
	n, err := countMemories(ctx, s.reader, orgID, ownerID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: count memories: %w", err)
	}
	return n, nil
}

func countMemories(ctx context.Context, q queryRower, orgID, ownerID string) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE org_id = ? AND owner_id = ?`, orgID, ownerID).Scan(&n)
	return n, err
}

// SearchMemories matches the terms of s.Text (each a quoted FTS5 string,
// so no input is read as query syntax), any of them, ranked by bm25.
func (s *Store) SearchMemories(ctx context.Context, sq store.MemorySearch) ([]store.Memory, error) {
	if err := store.CheckMemorySearch(sq); err != nil {
		return nil, fmt.Errorf("sqlite: search memories: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search memories: %w", err)
	}
	terms := store.MemoryTermLimit(sq.Text)
	if len(terms) == 0 || !validKeys(sq.OrgID, sq.OwnerID) {
		return nil, nil
	}
	// Only the searcher's and the shared memories' rows, by their scope
	// tokens; the best hits first, from the index alone; then their rows.
	// bm25 weighs the words alone (the scope column's weight is 0).
	match := "scope:(" + memorySearchScope(sq.OrgID, sq.OwnerID) + " OR " + memorySearchScope(sq.OrgID, sq.Also()) +
		") AND terms:(" + FTSQuery(terms) + ")"
	const q = `SELECT m.id, m.owner_id, m.text, m.model, m.created_at, m.updated_at
		FROM (SELECT org_id, memory_id, bm25(memory_search, 1.0, 0.0) AS score FROM memory_search
			WHERE memory_search MATCH ? AND org_id = ? AND owner_id IN (?, ?)
			ORDER BY score, memory_id LIMIT ?) s
		JOIN memories m ON m.org_id = s.org_id AND m.id = s.memory_id
		ORDER BY s.score, m.id`
	rows, err := s.reader.QueryContext(ctx, q, match, sq.OrgID, sq.OwnerID, sq.Also(), sq.Size())
	if err != nil {
		return nil, fmt.Errorf("sqlite: search memories: %w", err)
	}
	defer rows.Close()
	var out []store.Memory
	for rows.Next() {
		m, err := scanMemory(rows.Scan, sq.OrgID, false)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search memories: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search memories: %w", err)
	}
	return out, nil
}

// memorySearchScope is the scope token of an owner's memories in
// memory_search: 's', the organisation's id in hex, 'x', the owner's id
// in hex (migration 0026 writes the same in SQL). Hex keeps it one token
// of the ascii tokenizer whatever the ids hold, and 'x' is no hex digit,
// so no two (organisation, owner) pairs share one.
func memorySearchScope(orgID, ownerID string) string {
	return "s" + hex.EncodeToString([]byte(orgID)) + "x" + hex.EncodeToString([]byte(ownerID))
}

// FTSQuery is the FTS5 query that matches any of terms: each a string
// (double quotes doubled inside), joined by OR. An FTS5 string is a
// literal: nothing in it is an operator, a column filter or a prefix.
func FTSQuery(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, " OR ")
}

// MemoryVectors returns the vectors of model among the memories the
// owner sees: theirs, then the shared ones, each in (created_at, id)
// order, read in the order of memories_by_owner.
func (s *Store) MemoryVectors(ctx context.Context, orgID, ownerID, model string) ([]retrieve.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: memory vectors: %w", err)
	}
	if !validKeys(orgID, ownerID) {
		return nil, nil
	}
	owners := []string{ownerID}
	if ownerID != "" {
		owners = append(owners, "")
	}
	var out []retrieve.Candidate
	for _, owner := range owners {
		var err error
		if out, err = s.ownerVectors(ctx, out, orgID, owner, model); err != nil {
			return nil, fmt.Errorf("sqlite: memory vectors: %w", err)
		}
	}
	return out, nil
}

// ownerVectors appends the vectors of model of one owner's memories to
// out: from the cache while the owner's generation is the one they were
// read under, else from the database (the generation read first, so a
// change committed meanwhile makes the segment stale, never lost).
func (s *Store) ownerVectors(ctx context.Context, out []retrieve.Candidate, orgID, ownerID, model string) ([]retrieve.Candidate, error) {
	gen, err := s.memoryGeneration(ctx, orgID, ownerID)
	if err != nil {
		return nil, err
	}
	key := store.VectorKey{OrgID: orgID, OwnerID: ownerID, Model: model}
	if seg, ok := s.vectors.Get(key, gen); ok {
		return append(out, seg...), nil
	}
	seg, err := s.readOwnerVectors(ctx, orgID, ownerID, model)
	if err != nil {
		return nil, err
	}
	s.vectors.Put(key, gen, seg)
	return append(out, seg...), nil
}

// readOwnerVectors reads the vectors of model of one owner's memories.
func (s *Store) readOwnerVectors(ctx context.Context, orgID, ownerID, model string) ([]retrieve.Candidate, error) {
	var out []retrieve.Candidate
	const q = `SELECT id, vector FROM memories WHERE org_id = ? AND owner_id = ? AND model = ?
		ORDER BY created_at, id`
	rows, err := s.reader.QueryContext(ctx, q, orgID, ownerID, model)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c retrieve.Candidate
		var v []byte
		if err := rows.Scan(&c.ID, &v); err != nil {
			return nil, err
		}
		c.Vector = v
		out = append(out, c)
	}
	return out, rows.Err()
}
