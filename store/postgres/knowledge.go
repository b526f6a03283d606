package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// knowledgeColumns are a knowledge document's columns, in
// scanKnowledgeDocument's order.
const knowledgeColumns = `org_id, agent, id, name, media_type, size, status, reason, chunks, total, created_at, updated_at`

// knowledgeLockClass is the first key of the transaction-scoped advisory
// lock the writes of one agent's knowledge take (the ASCII of "know");
// the second is a hash of the organisation and agent. Under it the
// counts an agent's caps are checked against cannot change before the
// write, from any replica.
const knowledgeLockClass int32 = 0x6b6e6f77

// lockKnowledge takes the agent's knowledge lock in tx.
func lockKnowledge(ctx context.Context, tx pgx.Tx, orgID, agent string) error {
	const lock = `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text || '/' || $3::text))`
	_, err := tx.Exec(ctx, lock, knowledgeLockClass, orgID, agent)
	return err
}

// PutKnowledgeDocument validates d and, under the agent's lock, refuses
// an agent at MaxKnowledgeDocuments and a taken ID, and stores it as
// indexing.
func (s *Store) PutKnowledgeDocument(ctx context.Context, d store.KnowledgeDocument) (store.KnowledgeDocument, error) {
	d, err := store.CheckKnowledgeDocument(d)
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("postgres: put knowledge document: %w", err)
	}
	var created time.Time
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if err := lockKnowledge(ctx, tx, d.OrgID, d.Agent); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM knowledge_documents WHERE org_id = $1 AND agent = $2`,
			d.OrgID, d.Agent).Scan(&n); err != nil {
			return err
		}
		if err := store.CheckKnowledgeDocumentCount(d.Agent, n); err != nil {
			return err
		}
		const q = `INSERT INTO knowledge_documents (` + knowledgeColumns + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, '', 0, 0, $8, $8)
			ON CONFLICT (org_id, id) DO NOTHING RETURNING created_at`
		err := tx.QueryRow(ctx, q, d.OrgID, d.Agent, d.ID, d.Name, d.MediaType, d.Size, string(d.Status), d.CreatedAt).Scan(&created)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("knowledge document %q: %w", d.ID, store.ErrExists)
		}
		return err
	})
	if err != nil {
		return store.KnowledgeDocument{}, wrapErr("put knowledge document", err)
	}
	d.CreatedAt, d.UpdatedAt = utc(created), utc(created)
	return d, nil
}

// indexingDocument reads the agent's document in tx, refusing one that
// is not indexing.
func indexingDocument(ctx context.Context, tx pgx.Tx, orgID, agent, id string) (store.KnowledgeDocument, error) {
	if !validKeys(orgID, agent, id) {
		return store.KnowledgeDocument{}, pgx.ErrNoRows
	}
	row := tx.QueryRow(ctx, `SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE org_id = $1 AND agent = $2 AND id = $3
		FOR UPDATE`, orgID, agent, id)
	d, err := scanKnowledgeDocument(row.Scan)
	if err == nil && d.Status != store.KnowledgeIndexing {
		err = fmt.Errorf("%w: knowledge document %q is %s, not indexing", store.ErrKnowledgeInvalid, id, d.Status)
	}
	return d, err
}

// AddKnowledgeChunks appends chunks to an indexing document under the
// agent's lock, after checking them against the stored count and the
// agent's cap.
func (s *Store) AddKnowledgeChunks(ctx context.Context, orgID, agent, id string, total int, chunks []store.KnowledgeChunk, at time.Time) (store.KnowledgeDocument, error) {
	var d store.KnowledgeDocument
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if !validKeys(orgID, agent, id) {
			return pgx.ErrNoRows
		}
		if err := lockKnowledge(ctx, tx, orgID, agent); err != nil {
			return err
		}
		var err error
		if d, err = indexingDocument(ctx, tx, orgID, agent, id); err != nil {
			return err
		}
		if chunks, err = store.CheckKnowledgeChunks(d.Chunks, total, chunks); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM knowledge_chunks WHERE org_id = $1 AND agent = $2`,
			orgID, agent).Scan(&n); err != nil {
			return err
		}
		if err := store.CheckKnowledgeAgentChunks(agent, n, len(chunks)); err != nil {
			return err
		}
		rows := make([][]any, len(chunks))
		for i, c := range chunks {
			rows[i] = []any{orgID, id, c.Seq, agent, c.Text, c.Model, packedBytes(c.Vector)}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"knowledge_chunks"},
			[]string{"org_id", "document_id", "seq", "agent", "text", "model", "vector"}, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		d.Chunks, d.Total = d.Chunks+len(chunks), total
		return tx.QueryRow(ctx, `UPDATE knowledge_documents SET chunks = $3, total = $4, updated_at = $5
			WHERE org_id = $1 AND id = $2 RETURNING updated_at`, orgID, id, d.Chunks, d.Total, at).Scan(&d.UpdatedAt)
	})
	if err != nil {
		return store.KnowledgeDocument{}, wrapErr("add knowledge chunks", err)
	}
	d.UpdatedAt = utc(d.UpdatedAt)
	return d, nil
}

// packedBytes is v as the vector column stores it: empty for none.
func packedBytes(v embed.Packed) []byte {
	if v == nil {
		return []byte{}
	}
	return []byte(v)
}

// FinishKnowledgeDocument makes an indexing document ready, writing its
// chunks' full-text rows, or failed, deleting its chunks.
func (s *Store) FinishKnowledgeDocument(ctx context.Context, orgID, agent, id, reason string, at time.Time) (store.KnowledgeDocument, error) {
	var d store.KnowledgeDocument
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		if d, err = indexingDocument(ctx, tx, orgID, agent, id); err != nil {
			return err
		}
		if reason = store.CheckKnowledgeReason(reason); reason == "" {
			d.Status, d.Total = store.KnowledgeReady, d.Chunks
			if err := putKnowledgeTerms(ctx, tx, orgID, id); err != nil {
				return err
			}
		} else {
			d.Status, d.Reason, d.Chunks = store.KnowledgeFailed, reason, 0
			if _, err := tx.Exec(ctx, `DELETE FROM knowledge_chunks WHERE org_id = $1 AND document_id = $2`, orgID, id); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, `UPDATE knowledge_documents SET status = $3, reason = $4, chunks = $5, total = $6, updated_at = $7
			WHERE org_id = $1 AND id = $2 RETURNING updated_at`, orgID, id, string(d.Status), d.Reason, d.Chunks, d.Total, at).Scan(&d.UpdatedAt)
	})
	if err != nil {
		return store.KnowledgeDocument{}, wrapErr("finish knowledge document", err)
	}
	d.UpdatedAt = utc(d.UpdatedAt)
	return d, nil
}

// putKnowledgeTerms writes the full-text rows of one document's chunks:
// their store.MemoryTerms, made in Go (as memory_search's).
func putKnowledgeTerms(ctx context.Context, tx pgx.Tx, orgID, id string) error {
	rows, err := tx.Query(ctx, `SELECT seq, agent, text FROM knowledge_chunks WHERE org_id = $1 AND document_id = $2 ORDER BY seq`, orgID, id)
	if err != nil {
		return err
	}
	type chunk struct {
		seq         int
		agent, text string
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chunk, error) {
		var c chunk
		err := r.Scan(&c.seq, &c.agent, &c.text)
		return c, err
	})
	if err != nil {
		return err
	}
	const q = `INSERT INTO knowledge_search (org_id, document_id, seq, agent, terms)
		VALUES ($1, $2, $3, $4, array_to_tsvector($5::text[]))
		ON CONFLICT (org_id, document_id, seq) DO UPDATE SET terms = excluded.terms`
	b := &pgx.Batch{}
	for _, c := range cs {
		b.Queue(q, orgID, id, c.seq, c.agent, textArray(store.MemoryTerms(c.text)))
	}
	return tx.SendBatch(ctx, b).Close()
}

// rebuildKnowledgeSearch writes the full-text rows of every ready
// document, in tx: an import's step.
func rebuildKnowledgeSearch(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT org_id, id FROM knowledge_documents WHERE status = 'ready' ORDER BY org_id, id`)
	if err != nil {
		return fmt.Errorf("rebuild knowledge search: %w", err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var d [2]string
		err := r.Scan(&d[0], &d[1])
		return d, err
	})
	if err != nil {
		return fmt.Errorf("rebuild knowledge search: %w", err)
	}
	for _, d := range ds {
		if err := putKnowledgeTerms(ctx, tx, d[0], d[1]); err != nil {
			return fmt.Errorf("rebuild knowledge search: %w", err)
		}
	}
	return nil
}

// scanKnowledgeDocument reads knowledgeColumns, times in UTC.
func scanKnowledgeDocument(scan func(...any) error) (store.KnowledgeDocument, error) {
	var d store.KnowledgeDocument
	var status string
	if err := scan(&d.OrgID, &d.Agent, &d.ID, &d.Name, &d.MediaType, &d.Size, &status, &d.Reason, &d.Chunks, &d.Total,
		&d.CreatedAt, &d.UpdatedAt); err != nil {
		return store.KnowledgeDocument{}, err
	}
	d.Status = store.KnowledgeStatus(status)
	d.CreatedAt, d.UpdatedAt = utc(d.CreatedAt), utc(d.UpdatedAt)
	return d, nil
}

// GetKnowledgeDocument returns the agent's document.
func (s *Store) GetKnowledgeDocument(ctx context.Context, orgID, agent, id string) (store.KnowledgeDocument, error) {
	if err := ctx.Err(); err != nil {
		return store.KnowledgeDocument{}, wrapErr("get knowledge document", err)
	}
	if !validKeys(orgID, agent, id) {
		return store.KnowledgeDocument{}, wrapErr("get knowledge document", pgx.ErrNoRows)
	}
	row := s.pool.QueryRow(ctx, `SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE org_id = $1 AND agent = $2 AND id = $3`,
		orgID, agent, id)
	d, err := scanKnowledgeDocument(row.Scan)
	if err != nil {
		return store.KnowledgeDocument{}, wrapErr("get knowledge document", err)
	}
	return d, nil
}

// ListKnowledgeDocuments returns the agent's documents, oldest first.
func (s *Store) ListKnowledgeDocuments(ctx context.Context, orgID, agent string) ([]store.KnowledgeDocument, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("list knowledge documents", err)
	}
	if !validKeys(orgID, agent) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE org_id = $1 AND agent = $2
		ORDER BY created_at, id LIMIT $3`, orgID, agent, store.MaxKnowledgeDocuments)
	if err != nil {
		return nil, wrapErr("list knowledge documents", err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.KnowledgeDocument, error) {
		return scanKnowledgeDocument(r.Scan)
	})
	if err != nil {
		return nil, wrapErr("list knowledge documents", err)
	}
	return ds, nil
}

// DeleteKnowledgeDocument deletes the agent's document with its rows.
func (s *Store) DeleteKnowledgeDocument(ctx context.Context, orgID, agent, id string) error {
	n, err := deleteKnowledge(ctx, s.pool, `org_id = $1 AND agent = $2 AND id = $3`, orgID, agent, id)
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return wrapErr("delete knowledge document", err)
	}
	return nil
}

// DeleteAgentKnowledge deletes every document of the agent.
func (s *Store) DeleteAgentKnowledge(ctx context.Context, orgID, agent string) (int64, error) {
	n, err := deleteKnowledge(ctx, s.pool, `org_id = $1 AND agent = $2`, orgID, agent)
	if err != nil {
		return 0, wrapErr("delete agent knowledge", err)
	}
	return n, nil
}

// deleteKnowledge deletes the documents where (never from input) selects
// among knowledge_documents, with their chunks and full-text rows, in one
// statement, and returns how many documents.
func deleteKnowledge(ctx context.Context, db execer, where string, args ...any) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, a := range args {
		if !store.ValidBlobKey(a.(string)) {
			return 0, nil
		}
	}
	q := `WITH gone AS (DELETE FROM knowledge_documents WHERE ` + where + ` RETURNING org_id, id),
		chunks AS (DELETE FROM knowledge_chunks c USING gone WHERE c.org_id = gone.org_id AND c.document_id = gone.id),
		terms AS (DELETE FROM knowledge_search t USING gone WHERE t.org_id = gone.org_id AND t.document_id = gone.id)
		SELECT count(*) FROM gone`
	var n int64
	err := db.QueryRow(ctx, q, args...).Scan(&n)
	return n, err
}

// HasKnowledge reports whether the agent has a ready document.
func (s *Store) HasKnowledge(ctx context.Context, orgID, agent string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, wrapErr("has knowledge", err)
	}
	if !validKeys(orgID, agent) {
		return false, nil
	}
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM knowledge_documents WHERE org_id = $1 AND agent = $2 AND status = 'ready')`,
		orgID, agent).Scan(&ok)
	if err != nil {
		return false, wrapErr("has knowledge", err)
	}
	return ok, nil
}

// SearchKnowledge matches the terms of s.Text, any of them (TSQuery),
// ranked by ts_rank with the length dampened, among the agent's
// full-text rows (which only ready documents have).
func (s *Store) SearchKnowledge(ctx context.Context, sq store.KnowledgeSearch) ([]store.KnowledgeHit, error) {
	if err := store.CheckKnowledgeSearch(sq); err != nil {
		return nil, fmt.Errorf("postgres: search knowledge: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("search knowledge", err)
	}
	terms := store.MemoryTermLimit(sq.Text)
	if len(terms) == 0 || !validKeys(sq.OrgID, sq.Agent) {
		return nil, nil
	}
	const q = `SELECT t.document_id, d.name, t.seq, c.text
		FROM knowledge_search t
		JOIN knowledge_documents d ON d.org_id = t.org_id AND d.id = t.document_id
		JOIN knowledge_chunks c ON c.org_id = t.org_id AND c.document_id = t.document_id AND c.seq = t.seq
		WHERE t.org_id = $1 AND t.agent = $2 AND t.terms @@ $3::tsquery
		ORDER BY ts_rank(t.terms, $3::tsquery, 1) DESC, t.document_id, t.seq LIMIT $4`
	rows, err := s.pool.Query(ctx, q, sq.OrgID, sq.Agent, TSQuery(terms), sq.Size())
	if err != nil {
		return nil, wrapErr("search knowledge", err)
	}
	hs, err := collectKnowledgeHits(rows)
	if err != nil {
		return nil, wrapErr("search knowledge", err)
	}
	return hs, nil
}

// collectKnowledgeHits reads rows of (document_id, name, seq, text).
func collectKnowledgeHits(rows pgx.Rows) ([]store.KnowledgeHit, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.KnowledgeHit, error) {
		var h store.KnowledgeHit
		err := r.Scan(&h.DocumentID, &h.Name, &h.Seq, &h.Text)
		return h, err
	})
}

// KnowledgeVectors returns the vectors of model of the agent's ready
// documents' chunks.
func (s *Store) KnowledgeVectors(ctx context.Context, orgID, agent, model string) ([]retrieve.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("knowledge vectors", err)
	}
	if !validKeys(orgID, agent, model) || model == "" {
		return nil, nil
	}
	const q = `SELECT c.document_id, c.seq, c.vector FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = $1 AND c.agent = $2 AND c.model = $3 AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY c.document_id, c.seq`
	rows, err := s.pool.Query(ctx, q, orgID, agent, model)
	if err != nil {
		return nil, wrapErr("knowledge vectors", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (retrieve.Candidate, error) {
		var doc string
		var seq int
		var v []byte
		err := r.Scan(&doc, &seq, &v)
		return retrieve.Candidate{ID: store.KnowledgeChunkID(doc, seq), Vector: v}, err
	})
	if err != nil {
		return nil, wrapErr("knowledge vectors", err)
	}
	return out, nil
}

// KnowledgeChunks returns the named chunks of the agent's ready
// documents, in the order of ids.
func (s *Store) KnowledgeChunks(ctx context.Context, orgID, agent string, ids []string) ([]store.KnowledgeHit, error) {
	if len(ids) > store.MaxKnowledgeBatch {
		return nil, fmt.Errorf("postgres: knowledge chunks: %w: %d ids; the limit is %d", store.ErrKnowledgeInvalid, len(ids), store.MaxKnowledgeBatch)
	}
	if !validKeys(orgID, agent) {
		return nil, nil
	}
	var docs []string
	var seqs []int32
	for _, id := range ids {
		if doc, seq, ok := store.ParseKnowledgeChunkID(id); ok && store.ValidBlobKey(doc) {
			docs, seqs = append(docs, doc), append(seqs, int32(seq))
		}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	const q = `SELECT c.document_id, d.name, c.seq, c.text
		FROM unnest($3::text[], $4::integer[]) WITH ORDINALITY AS w(document_id, seq, n)
		JOIN knowledge_chunks c ON c.org_id = $1 AND c.agent = $2 AND c.document_id = w.document_id AND c.seq = w.seq
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY w.n`
	rows, err := s.pool.Query(ctx, q, orgID, agent, docs, seqs)
	if err != nil {
		return nil, wrapErr("knowledge chunks", err)
	}
	hs, err := collectKnowledgeHits(rows)
	if err != nil {
		return nil, wrapErr("knowledge chunks", err)
	}
	return hs, nil
}

// DocumentKnowledgeChunks returns the ready document's chunks from seq
// from, in order.
func (s *Store) DocumentKnowledgeChunks(ctx context.Context, orgID, agent, id string, from, limit int) ([]store.KnowledgeHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("document knowledge chunks", err)
	}
	if !validKeys(orgID, agent, id) {
		return nil, nil
	}
	const q = `SELECT c.document_id, d.name, c.seq, c.text FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = $1 AND c.agent = $2 AND c.document_id = $3 AND c.seq >= $4 AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY c.seq LIMIT $5`
	rows, err := s.pool.Query(ctx, q, orgID, agent, id, max(from, 0), store.KnowledgeBatchSize(limit))
	if err != nil {
		return nil, wrapErr("document knowledge chunks", err)
	}
	hs, err := collectKnowledgeHits(rows)
	if err != nil {
		return nil, wrapErr("document knowledge chunks", err)
	}
	return hs, nil
}

// StaleKnowledgeChunks returns chunks of the agent's ready documents
// whose model is not model.
func (s *Store) StaleKnowledgeChunks(ctx context.Context, orgID, agent, model string, limit int) ([]store.KnowledgeHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("stale knowledge chunks", err)
	}
	if !validKeys(orgID, agent, model) {
		return nil, nil
	}
	const q = `SELECT c.document_id, d.name, c.seq, c.text FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = $1 AND c.agent = $2 AND c.model <> $3 AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY c.document_id, c.seq LIMIT $4`
	rows, err := s.pool.Query(ctx, q, orgID, agent, model, store.KnowledgeBatchSize(limit))
	if err != nil {
		return nil, wrapErr("stale knowledge chunks", err)
	}
	hs, err := collectKnowledgeHits(rows)
	if err != nil {
		return nil, wrapErr("stale knowledge chunks", err)
	}
	return hs, nil
}

// SetKnowledgeVectors replaces the named chunks' vectors in one
// transaction.
func (s *Store) SetKnowledgeVectors(ctx context.Context, orgID, agent string, vs []store.KnowledgeVector) (int64, error) {
	if err := store.CheckKnowledgeVectors(vs); err != nil {
		return 0, fmt.Errorf("postgres: set knowledge vectors: %w", err)
	}
	if !validKeys(orgID, agent) || len(vs) == 0 {
		return 0, nil
	}
	var n int64
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		for _, v := range vs {
			tag, err := tx.Exec(ctx, `UPDATE knowledge_chunks SET model = $5, vector = $6
				WHERE org_id = $1 AND agent = $2 AND document_id = $3 AND seq = $4`,
				orgID, agent, v.DocumentID, v.Seq, v.Model, []byte(v.Vector))
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return 0, wrapErr("set knowledge vectors", err)
	}
	return n, nil
}
