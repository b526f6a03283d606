package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// memoryColumns are a memory's columns but its vector, in scanMemory's
// order.
const memoryColumns = `id, owner_id, text, model, created_at, updated_at`

// memoryQuotaLockClass is the first key of the transaction-scoped
// advisory lock PutMemory takes per owner (the ASCII of "memo"); the
// second is a hash of the organisation and owner.
const memoryQuotaLockClass int32 = 0x6d656d6f

// PutMemory validates m (store.CheckMemory) and stores it with its
// full-text terms, in one transaction at READ COMMITTED that first takes
// an advisory lock on the owner: puts for one owner, from every replica,
// queue on it, and the count, read after the lock is granted, sees every
// memory committed before, so together they never pass
// the owner's cap.
func (s *Store) PutMemory(ctx context.Context, m store.Memory, limit int64) (store.Memory, error) {
	m, err := store.CheckMemory(m)
	if err != nil {
		return store.Memory{}, fmt.Errorf("postgres: put memory: %w", err)
	}
	m.UpdatedAt = m.CreatedAt
	var created time.Time
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		const lock = `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text || '/' || $3::text))`
		if _, err := tx.Exec(ctx, lock, memoryQuotaLockClass, m.OrgID, m.OwnerID); err != nil {
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
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
			ON CONFLICT (org_id, id) DO NOTHING
			RETURNING created_at`
		err = tx.QueryRow(ctx, q, m.OrgID, m.ID, m.OwnerID, m.Text, m.Model, []byte(m.Vector), m.CreatedAt).Scan(&created)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("memory %q: %w", m.ID, store.ErrExists)
		}
		if err != nil {
			return err
		}
		if err := bumpMemoryGeneration(ctx, tx, m.OrgID, m.OwnerID); err != nil {
			return err
		}
		return putMemoryTerms(ctx, tx, m)
	})
	if err != nil {
		return store.Memory{}, wrapErr("put memory", err)
	}
	m.CreatedAt, m.UpdatedAt = utc(created), utc(created)
	return m, nil
}

// bumpMemoryGenerationSQL stamps a change of an owner's memories with $3,
// a fresh generation (store.VectorCache).
const bumpMemoryGenerationSQL = `INSERT INTO memory_generations (org_id, owner_id, gen) VALUES ($1, $2, $3)
	ON CONFLICT (org_id, owner_id) DO UPDATE SET gen = excluded.gen`

// bumpMemoryGeneration stamps a change of the owner's memories, in the
// change's transaction.
func bumpMemoryGeneration(ctx context.Context, tx pgx.Tx, orgID, ownerID string) error {
	_, err := tx.Exec(ctx, bumpMemoryGenerationSQL, orgID, ownerID, store.NewGeneration())
	return err
}

// putMemoryTermsSQL writes a memory's full-text row: $4 its terms.
const putMemoryTermsSQL = `INSERT INTO memory_search (org_id, memory_id, owner_id, terms)
	VALUES ($1, $2, $3, array_to_tsvector($4::text[]))
	ON CONFLICT (org_id, memory_id) DO UPDATE SET terms = excluded.terms, owner_id = excluded.owner_id`

// putMemoryTerms writes (or rewrites) the full-text row of m.
func putMemoryTerms(ctx context.Context, tx pgx.Tx, m store.Memory) error {
	_, err := tx.Exec(ctx, putMemoryTermsSQL, m.OrgID, m.ID, m.OwnerID, textArray(store.MemoryTerms(m.Text)))
	return err
}

// rebuildMemorySearch writes the full-text row of every memory, in tx: an
// import's step (the derived rows are not archived).
func rebuildMemorySearch(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT org_id, id, owner_id, text FROM memories ORDER BY org_id, id`)
	if err != nil {
		return fmt.Errorf("rebuild memory search: %w", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Memory, error) {
		var m store.Memory
		err := r.Scan(&m.OrgID, &m.ID, &m.OwnerID, &m.Text)
		return m, err
	})
	if err != nil {
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
// and its full-text terms, in one transaction.
func (s *Store) UpdateMemory(ctx context.Context, m store.Memory) (store.Memory, error) {
	m, err := store.CheckMemoryUpdate(m)
	if err != nil {
		return store.Memory{}, fmt.Errorf("postgres: update memory: %w", err)
	}
	var created, updated time.Time
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		const q = `UPDATE memories SET text = $4, model = $5, vector = $6, updated_at = $7
			WHERE org_id = $1 AND owner_id = $2 AND id = $3 RETURNING created_at, updated_at`
		err := tx.QueryRow(ctx, q, m.OrgID, m.OwnerID, m.ID, m.Text, m.Model, []byte(m.Vector), m.UpdatedAt).Scan(&created, &updated)
		if err != nil {
			return err
		}
		if err := bumpMemoryGeneration(ctx, tx, m.OrgID, m.OwnerID); err != nil {
			return err
		}
		return putMemoryTerms(ctx, tx, m)
	})
	if err != nil {
		return store.Memory{}, wrapErr("update memory", err)
	}
	m.CreatedAt, m.UpdatedAt = utc(created), utc(updated)
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

// GetMemory returns the owner's memory with its vector.
func (s *Store) GetMemory(ctx context.Context, orgID, ownerID, id string) (store.Memory, error) {
	if err := ctx.Err(); err != nil {
		return store.Memory{}, wrapErr("get memory", err)
	}
	if !validKeys(orgID, ownerID, id) {
		return store.Memory{}, wrapErr("get memory", pgx.ErrNoRows)
	}
	row := s.pool.QueryRow(ctx, `SELECT `+memoryColumns+`, vector FROM memories
		WHERE org_id = $1 AND owner_id = $2 AND id = $3`, orgID, ownerID, id)
	m, err := scanMemory(row.Scan, orgID, true)
	if err != nil {
		return store.Memory{}, wrapErr("get memory", err)
	}
	return m, nil
}

// scanMemory reads memoryColumns (and the vector when withVector).
func scanMemory(scan func(...any) error, orgID string, withVector bool) (store.Memory, error) {
	m := store.Memory{OrgID: orgID}
	var vec []byte
	dest := []any{&m.ID, &m.OwnerID, &m.Text, &m.Model, &m.CreatedAt, &m.UpdatedAt}
	if withVector {
		dest = append(dest, &vec)
	}
	if err := scan(dest...); err != nil {
		return store.Memory{}, err
	}
	m.CreatedAt, m.UpdatedAt = utc(m.CreatedAt), utc(m.UpdatedAt)
	if withVector {
		m.Vector = embed.Packed(vec)
	}
	return m, nil
}

// ListMemories returns one page of the owner's memories, newest first.
func (s *Store) ListMemories(ctx context.Context, orgID, ownerID string, p store.MemoryPage) (store.MemoryList, error) {
	if err := ctx.Err(); err != nil {
		return store.MemoryList{}, wrapErr("list memories", err)
	}
	if !validKeys(orgID, ownerID, p.BeforeID) {
		return store.MemoryList{}, nil
	}
	n := p.Size()
	q := `SELECT ` + memoryColumns + ` FROM memories WHERE org_id = $1 AND owner_id = $2`
	args := []any{orgID, ownerID, n + 1}
	if !p.BeforeCreatedAt.IsZero() || p.BeforeID != "" {
		q += ` AND (created_at, id) < ($4, $5)`
		args = append(args, p.BeforeCreatedAt, p.BeforeID)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT $3`
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return store.MemoryList{}, wrapErr("list memories", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Memory, error) {
		return scanMemory(r.Scan, orgID, false)
	})
	if err != nil {
		return store.MemoryList{}, wrapErr("list memories", err)
	}
	l := store.MemoryList{Memories: ms}
	if len(l.Memories) > n {
		l.Memories, l.More = l.Memories[:n], true
	}
	return l, nil
}

// DeleteMemory deletes the owner's memory and its full-text row.
func (s *Store) DeleteMemory(ctx context.Context, orgID, ownerID, id string) error {
	n, err := s.deleteMemories(ctx, `INSERT INTO memory_generations (org_id, owner_id, gen)
			SELECT DISTINCT org_id, owner_id, $4::bigint FROM gone
			ON CONFLICT (org_id, owner_id) DO UPDATE SET gen = excluded.gen`,
		`org_id = $1 AND owner_id = $2 AND id = $3`, orgID, ownerID, id, store.NewGeneration())
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return wrapErr("delete memory", err)
	}
	return nil
}

// DeleteOwnerMemories deletes every memory of the owner.
func (s *Store) DeleteOwnerMemories(ctx context.Context, orgID, ownerID string) (int64, error) {
	if ownerID == "" {
		return 0, ctx.Err()
	}
	// The owner's generation goes with their memories: a segment without
	// one is never cached.
	n, err := s.deleteMemories(ctx, `DELETE FROM memory_generations WHERE org_id = $1 AND owner_id = $2`,
		`org_id = $1 AND owner_id = $2`, orgID, ownerID)
	if err != nil {
		return 0, wrapErr("delete owner memories", err)
	}
	return n, nil
}

// DeleteOrgMemories deletes every memory of the organisation.
func (s *Store) DeleteOrgMemories(ctx context.Context, orgID string) (int64, error) {
	n, err := s.deleteMemories(ctx, `DELETE FROM memory_generations WHERE org_id = $1`, `org_id = $1`, orgID)
	if err != nil {
		return 0, wrapErr("delete org memories", err)
	}
	return n, nil
}

// deleteMemories deletes the memories where (never from input) selects,
// with their full-text rows, and runs gens (a statement over gone, the
// deleted rows' org_id, id and owner_id: what the deletion does to the
// owners' generations), in one statement. Every string argument is a key.
func (s *Store) deleteMemories(ctx context.Context, gens, where string, args ...any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, a := range args {
		if k, ok := a.(string); ok && !store.ValidBlobKey(k) {
			return 0, nil
		}
	}
	q := `WITH gone AS (DELETE FROM memories WHERE ` + where + ` RETURNING org_id, id, owner_id),
		terms AS (DELETE FROM memory_search t USING gone
			WHERE t.org_id = gone.org_id AND t.memory_id = gone.id),
		gens AS (` + gens + `)
		SELECT count(*) FROM gone`
	var n int64
	err := s.pool.QueryRow(ctx, q, args...).Scan(&n)
	return n, err
}

// CountMemories returns how many memories the owner holds.
func (s *Store) CountMemories(ctx context.Context, orgID, ownerID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, wrapErr("count memories", err)
	}
	if !validKeys(orgID, ownerID) {
		return 0, nil
	}
	n, err := countMemories(ctx, s.pool, orgID, ownerID)
	if err != nil {
		return 0, wrapErr("count memories", err)
	}
	return n, nil
}

func countMemories(ctx context.Context, db execer, orgID, ownerID string) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT count(*) FROM memories WHERE org_id = $1 AND owner_id = $2`, orgID, ownerID).Scan(&n)
	return n, err
}

// SearchMemories matches the terms of s.Text, any of them (TSQuery: each
// a quoted lexeme, so no input is read as query syntax), ranked by
// ts_rank with the document's length dampened (normalization 1).
func (s *Store) SearchMemories(ctx context.Context, sq store.MemorySearch) ([]store.Memory, error) {
	if err := store.CheckMemorySearch(sq); err != nil {
		return nil, fmt.Errorf("postgres: search memories: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("search memories", err)
	}
	terms := store.MemoryTermLimit(sq.Text)
	if len(terms) == 0 || !validKeys(sq.OrgID, sq.OwnerID) {
		return nil, nil
	}
	const q = `SELECT m.id, m.owner_id, m.text, m.model, m.created_at, m.updated_at
		FROM memory_search t JOIN memories m ON m.org_id = t.org_id AND m.id = t.memory_id
		WHERE t.org_id = $1 AND t.owner_id IN ($2, $5) AND t.terms @@ $3::tsquery
		ORDER BY ts_rank(t.terms, $3::tsquery, 1) DESC, m.id LIMIT $4`
	rows, err := s.pool.Query(ctx, q, sq.OrgID, sq.OwnerID, TSQuery(terms), sq.Size(), sq.Also())
	if err != nil {
		return nil, wrapErr("search memories", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Memory, error) {
		return scanMemory(r.Scan, sq.OrgID, false)
	})
	if err != nil {
		return nil, wrapErr("search memories", err)
	}
	return ms, nil
}

// TSQuery is the tsquery text that matches any of terms: each a quoted
// lexeme (a quote doubled, a backslash escaped), joined by |. A quoted
// lexeme is a literal: nothing in it is an operator, a weight or a
// prefix.
func TSQuery(terms []string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `''`)
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `'` + r.Replace(t) + `'`
	}
	return strings.Join(q, " | ")
}

// MemoryVectors returns the vectors of model among the memories the
// owner sees: theirs, then the shared ones, each in (created_at, id)
// order, read in the order of memories_by_owner (no sort of the vectors).
// Each owner's are kept in the store's cache while their generation
// stays the one they were read under (read first, so that a change
// committed meanwhile makes them stale, never lost).
func (s *Store) MemoryVectors(ctx context.Context, orgID, ownerID, model string) ([]retrieve.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("memory vectors", err)
	}
	if !validKeys(orgID, ownerID, model) {
		return nil, nil
	}
	gens, err := s.memoryGenerations(ctx, orgID, ownerID)
	if err != nil {
		return nil, wrapErr("memory vectors", err)
	}
	owners := []string{ownerID}
	if ownerID != "" {
		owners = append(owners, "")
	}
	var out []retrieve.Candidate
	for _, owner := range owners {
		key := store.VectorKey{OrgID: orgID, OwnerID: owner, Model: model}
		seg, ok := s.vectors.Get(key, gens[owner])
		if !ok {
			if seg, err = s.readOwnerVectors(ctx, orgID, owner, model); err != nil {
				return nil, wrapErr("memory vectors", err)
			}
			s.vectors.Put(key, gens[owner], seg)
		}
		out = append(out, seg...)
	}
	return out, nil
}

// memoryGenerations reads the generations of the owner and of the shared
// memories, by owner ID; an owner without one is missing (0).
func (s *Store) memoryGenerations(ctx context.Context, orgID, ownerID string) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT owner_id, gen FROM memory_generations WHERE org_id = $1 AND owner_id IN ($2, '')`,
		orgID, ownerID)
	if err != nil {
		return nil, err
	}
	gens := map[string]int64{}
	var owner string
	var gen int64
	_, err = pgx.ForEachRow(rows, []any{&owner, &gen}, func() error { gens[owner] = gen; return nil })
	return gens, err
}

// readOwnerVectors reads the vectors of model of one owner's memories.
func (s *Store) readOwnerVectors(ctx context.Context, orgID, ownerID, model string) ([]retrieve.Candidate, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, vector FROM memories WHERE org_id = $1 AND owner_id = $2 AND model = $3
		ORDER BY created_at, id`, orgID, ownerID, model)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (retrieve.Candidate, error) {
		var c retrieve.Candidate
		var v []byte
		err := r.Scan(&c.ID, &v)
		c.Vector = v
		return c, err
	})
}
