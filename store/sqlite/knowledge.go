package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// knowledgeColumns are a knowledge document's columns, in
// scanKnowledgeDocument's order.
const knowledgeColumns = `org_id, agent, id, name, media_type, size, status, reason, chunks, total, created_at, updated_at`

// PutKnowledgeDocument validates d and, in one write transaction (the
// write lock held from BEGIN, so the count cannot change before the
// insert), refuses a taken ID and an agent at MaxKnowledgeDocuments, and
// stores it as indexing.
func (s *Store) PutKnowledgeDocument(ctx context.Context, d store.KnowledgeDocument) (store.KnowledgeDocument, error) {
	d, err := store.CheckKnowledgeDocument(d)
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: put knowledge document: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM knowledge_documents WHERE org_id = ? AND id = ?`, d.OrgID, d.ID).Scan(&one)
		switch {
		case err == nil:
			return fmt.Errorf("knowledge document %q: %w", d.ID, store.ErrExists)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM knowledge_documents WHERE org_id = ? AND agent = ?`,
			d.OrgID, d.Agent).Scan(&n); err != nil {
			return err
		}
		if err := store.CheckKnowledgeDocumentCount(d.Agent, n); err != nil {
			return err
		}
		const q = `INSERT INTO knowledge_documents (` + knowledgeColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, '', 0, 0, ?, ?)`
		_, err = tx.ExecContext(ctx, q, d.OrgID, d.Agent, d.ID, d.Name, d.MediaType, d.Size, string(d.Status),
			encodeTime(d.CreatedAt), encodeTime(d.UpdatedAt))
		return err
	})
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: put knowledge document: %w", err)
	}
	return d, nil
}

// AddKnowledgeChunks appends chunks to an indexing document in one write
// transaction, after checking them against the stored count and the
// agent's cap.
func (s *Store) AddKnowledgeChunks(ctx context.Context, orgID, agent, id string, total int, chunks []store.KnowledgeChunk, at time.Time) (store.KnowledgeDocument, error) {
	var d store.KnowledgeDocument
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if d, err = indexingDocument(ctx, tx, orgID, agent, id); err != nil {
			return err
		}
		if chunks, err = store.CheckKnowledgeChunks(d.Chunks, total, chunks); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM knowledge_chunks WHERE org_id = ? AND agent = ?`,
			orgID, agent).Scan(&n); err != nil {
			return err
		}
		if err := store.CheckKnowledgeAgentChunks(agent, n, len(chunks)); err != nil {
			return err
		}
		const q = `INSERT INTO knowledge_chunks (org_id, document_id, seq, agent, text, model, vector) VALUES (?, ?, ?, ?, ?, ?, ?)`
		for _, c := range chunks {
			if _, err := tx.ExecContext(ctx, q, orgID, id, c.Seq, agent, c.Text, c.Model, packedBytes(c.Vector)); err != nil {
				return err
			}
		}
		d.Chunks, d.Total, d.UpdatedAt = d.Chunks+len(chunks), total, at.UTC()
		_, err = tx.ExecContext(ctx, `UPDATE knowledge_documents SET chunks = ?, total = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
			d.Chunks, d.Total, encodeTime(d.UpdatedAt), orgID, id)
		return err
	})
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: add knowledge chunks: %w", err)
	}
	return d, nil
}

// packedBytes is v as the vector column stores it: empty for none.
func packedBytes(v embed.Packed) []byte {
	if v == nil {
		return []byte{}
	}
	return []byte(v)
}

// indexingDocument reads the agent's document in tx, refusing one that
// is not indexing.
func indexingDocument(ctx context.Context, tx *sql.Tx, orgID, agent, id string) (store.KnowledgeDocument, error) {
	if !validKeys(orgID, agent, id) {
		return store.KnowledgeDocument{}, store.ErrNotFound
	}
	row := tx.QueryRowContext(ctx, `SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE org_id = ? AND agent = ? AND id = ?`,
		orgID, agent, id)
	d, err := scanKnowledgeDocument(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("knowledge document %q: %w", id, store.ErrNotFound)
	}
	if err == nil && d.Status != store.KnowledgeIndexing {
		err = fmt.Errorf("%w: knowledge document %q is %s, not indexing", store.ErrKnowledgeInvalid, id, d.Status)
	}
	return d, err
}

// FinishKnowledgeDocument makes an indexing document ready, writing its
// chunks' full-text rows, or failed, deleting its chunks.
func (s *Store) FinishKnowledgeDocument(ctx context.Context, orgID, agent, id, reason string, at time.Time) (store.KnowledgeDocument, error) {
	var d store.KnowledgeDocument
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if d, err = indexingDocument(ctx, tx, orgID, agent, id); err != nil {
			return err
		}
		d.UpdatedAt = at.UTC()
		if reason = store.CheckKnowledgeReason(reason); reason == "" {
			d.Status, d.Total = store.KnowledgeReady, d.Chunks
			if err := putKnowledgeTerms(ctx, tx, orgID, agent, id); err != nil {
				return err
			}
		} else {
			d.Status, d.Reason, d.Chunks = store.KnowledgeFailed, reason, 0
			if _, err := tx.ExecContext(ctx, `DELETE FROM knowledge_chunks WHERE org_id = ? AND document_id = ?`, orgID, id); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE knowledge_documents SET status = ?, reason = ?, chunks = ?, total = ?, updated_at = ?
			WHERE org_id = ? AND id = ?`, string(d.Status), d.Reason, d.Chunks, d.Total, encodeTime(d.UpdatedAt), orgID, id)
		return err
	})
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: finish knowledge document: %w", err)
	}
	return d, nil
}

// putKnowledgeTerms writes the full-text rows of one document's chunks.
func putKnowledgeTerms(ctx context.Context, tx *sql.Tx, orgID, agent, id string) error {
	rows, err := tx.QueryContext(ctx, `SELECT seq, text FROM knowledge_chunks WHERE org_id = ? AND document_id = ? ORDER BY seq`, orgID, id)
	if err != nil {
		return err
	}
	type chunk struct {
		seq  int
		text string
	}
	var cs []chunk
	for rows.Next() {
		var c chunk
		if err := rows.Scan(&c.seq, &c.text); err != nil {
			rows.Close()
			return err
		}
		cs = append(cs, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range cs {
		res, err := tx.ExecContext(ctx, `INSERT INTO knowledge_search (terms, org_id, agent, document_id, seq) VALUES (?, ?, ?, ?, ?)`,
			strings.Join(store.MemoryTerms(c.text), " "), orgID, agent, id, c.seq)
		if err != nil {
			return err
		}
		rowid, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_search_rows (org_id, document_id, search_id) VALUES (?, ?, ?)`,
			orgID, id, rowid); err != nil {
			return err
		}
	}
	return nil
}

// rebuildKnowledgeSearch writes the full-text rows of every ready
// document, in tx: an import's step.
func rebuildKnowledgeSearch(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT org_id, agent, id FROM knowledge_documents WHERE status = 'ready' ORDER BY org_id, id`)
	if err != nil {
		return fmt.Errorf("rebuild knowledge search: %w", err)
	}
	var ds [][3]string
	for rows.Next() {
		var d [3]string
		if err := rows.Scan(&d[0], &d[1], &d[2]); err != nil {
			rows.Close()
			return fmt.Errorf("rebuild knowledge search: %w", err)
		}
		ds = append(ds, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rebuild knowledge search: %w", err)
	}
	for _, d := range ds {
		if err := putKnowledgeTerms(ctx, tx, d[0], d[1], d[2]); err != nil {
			return fmt.Errorf("rebuild knowledge search: %w", err)
		}
	}
	return nil
}

// scanKnowledgeDocument reads knowledgeColumns.
func scanKnowledgeDocument(scan func(...any) error) (store.KnowledgeDocument, error) {
	var d store.KnowledgeDocument
	var status, created, updated string
	if err := scan(&d.OrgID, &d.Agent, &d.ID, &d.Name, &d.MediaType, &d.Size, &status, &d.Reason, &d.Chunks, &d.Total,
		&created, &updated); err != nil {
		return store.KnowledgeDocument{}, err
	}
	d.Status = store.KnowledgeStatus(status)
	var err error
	if d.CreatedAt, err = decodeTime(created); err != nil {
		return store.KnowledgeDocument{}, err
	}
	if d.UpdatedAt, err = decodeTime(updated); err != nil {
		return store.KnowledgeDocument{}, err
	}
	return d, nil
}

// GetKnowledgeDocument returns the agent's document.
func (s *Store) GetKnowledgeDocument(ctx context.Context, orgID, agent, id string) (store.KnowledgeDocument, error) {
	if err := ctx.Err(); err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: get knowledge document: %w", err)
	}
	if !validKeys(orgID, agent, id) {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: get knowledge document: %w", store.ErrNotFound)
	}
	row := s.reader.QueryRowContext(ctx, `SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE org_id = ? AND agent = ? AND id = ?`,
		orgID, agent, id)
	d, err := scanKnowledgeDocument(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.KnowledgeDocument{}, fmt.Errorf("sqlite: get knowledge document: %w", err)
	}
	return d, nil
}

// ListKnowledgeDocuments returns the agent's documents, oldest first.
func (s *Store) ListKnowledgeDocuments(ctx context.Context, orgID, agent string) ([]store.KnowledgeDocument, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list knowledge documents: %w", err)
	}
	if !validKeys(orgID, agent) {
		return nil, nil
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE org_id = ? AND agent = ?
		ORDER BY created_at, id LIMIT ?`, orgID, agent, store.MaxKnowledgeDocuments)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list knowledge documents: %w", err)
	}
	defer rows.Close()
	var out []store.KnowledgeDocument
	for rows.Next() {
		d, err := scanKnowledgeDocument(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list knowledge documents: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list knowledge documents: %w", err)
	}
	return out, nil
}

// DeleteKnowledgeDocument deletes the agent's document with its rows.
func (s *Store) DeleteKnowledgeDocument(ctx context.Context, orgID, agent, id string) error {
	var n int64
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = deleteKnowledge(ctx, tx, `org_id = ? AND agent = ? AND id = ?`, orgID, agent, id)
		return err
	})
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete knowledge document: %w", err)
	}
	return nil
}

// DeleteAgentKnowledge deletes every document of the agent.
func (s *Store) DeleteAgentKnowledge(ctx context.Context, orgID, agent string) (int64, error) {
	var n int64
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = deleteKnowledge(ctx, tx, `org_id = ? AND agent = ?`, orgID, agent)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete agent knowledge: %w", err)
	}
	return n, nil
}

// deleteKnowledge deletes, in tx, the documents where (never from input)
// selects among knowledge_documents, with their chunks and full-text
// rows, and returns how many documents.
func deleteKnowledge(ctx context.Context, tx *sql.Tx, where string, args ...any) (int64, error) {
	for _, a := range args {
		if !store.ValidBlobKey(a.(string)) {
			return 0, nil
		}
	}
	docs := `SELECT org_id, id FROM knowledge_documents WHERE ` + where
	if _, err := tx.ExecContext(ctx, `DELETE FROM knowledge_search WHERE rowid IN (SELECT search_id FROM knowledge_search_rows
		WHERE (org_id, document_id) IN (`+docs+`))`, args...); err != nil {
		return 0, err
	}
	for _, table := range []string{"knowledge_search_rows", "knowledge_chunks"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE (org_id, document_id) IN (`+docs+`)`, args...); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM knowledge_documents WHERE `+where, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// HasKnowledge reports whether the agent has a ready document.
func (s *Store) HasKnowledge(ctx context.Context, orgID, agent string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("sqlite: has knowledge: %w", err)
	}
	if !validKeys(orgID, agent) {
		return false, nil
	}
	var one int
	err := s.reader.QueryRowContext(ctx, `SELECT 1 FROM knowledge_documents WHERE org_id = ? AND agent = ? AND status = 'ready' LIMIT 1`,
		orgID, agent).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sqlite: has knowledge: %w", err)
	}
	return true, nil
}

// SearchKnowledge matches the terms of s.Text (each a quoted FTS5
// string), any of them, ranked by bm25, among the agent's full-text rows
// (which only ready documents have).
func (s *Store) SearchKnowledge(ctx context.Context, sq store.KnowledgeSearch) ([]store.KnowledgeHit, error) {
	if err := store.CheckKnowledgeSearch(sq); err != nil {
		return nil, fmt.Errorf("sqlite: search knowledge: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search knowledge: %w", err)
	}
	terms := store.MemoryTermLimit(sq.Text)
	if len(terms) == 0 || !validKeys(sq.OrgID, sq.Agent) {
		return nil, nil
	}
	const q = `SELECT s.document_id, d.name, s.seq, c.text
		FROM (SELECT org_id, document_id, seq, bm25(knowledge_search) AS score FROM knowledge_search
			WHERE knowledge_search MATCH ? AND org_id = ? AND agent = ?
			ORDER BY score, document_id, seq LIMIT ?) s
		JOIN knowledge_documents d ON d.org_id = s.org_id AND d.id = s.document_id
		JOIN knowledge_chunks c ON c.org_id = s.org_id AND c.document_id = s.document_id AND c.seq = s.seq
		ORDER BY s.score, s.document_id, s.seq`
	rows, err := s.reader.QueryContext(ctx, q, FTSQuery(terms), sq.OrgID, sq.Agent, sq.Size())
	if err != nil {
		return nil, fmt.Errorf("sqlite: search knowledge: %w", err)
	}
	out, err := scanKnowledgeHits(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search knowledge: %w", err)
	}
	return out, nil
}

// scanKnowledgeHits reads rows of (document_id, name, seq, text) and
// closes them.
func scanKnowledgeHits(rows *sql.Rows) ([]store.KnowledgeHit, error) {
	defer rows.Close()
	var out []store.KnowledgeHit
	for rows.Next() {
		var h store.KnowledgeHit
		if err := rows.Scan(&h.DocumentID, &h.Name, &h.Seq, &h.Text); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// KnowledgeVectors returns the vectors of model of the agent's ready
// documents' chunks.
func (s *Store) KnowledgeVectors(ctx context.Context, orgID, agent, model string) ([]retrieve.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: knowledge vectors: %w", err)
	}
	if !validKeys(orgID, agent) || model == "" {
		return nil, nil
	}
	const q = `SELECT c.document_id, c.seq, c.vector FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = ? AND c.agent = ? AND c.model = ? AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY c.document_id, c.seq`
	rows, err := s.reader.QueryContext(ctx, q, orgID, agent, model)
	if err != nil {
		return nil, fmt.Errorf("sqlite: knowledge vectors: %w", err)
	}
	defer rows.Close()
	var out []retrieve.Candidate
	for rows.Next() {
		var doc string
		var seq int
		var v []byte
		if err := rows.Scan(&doc, &seq, &v); err != nil {
			return nil, fmt.Errorf("sqlite: knowledge vectors: %w", err)
		}
		out = append(out, retrieve.Candidate{ID: store.KnowledgeChunkID(doc, seq), Vector: v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: knowledge vectors: %w", err)
	}
	return out, nil
}

// KnowledgeChunks returns the named chunks of the agent's ready
// documents, in the order of ids.
func (s *Store) KnowledgeChunks(ctx context.Context, orgID, agent string, ids []string) ([]store.KnowledgeHit, error) {
	if len(ids) > store.MaxKnowledgeBatch {
		return nil, fmt.Errorf("sqlite: knowledge chunks: %w: %d ids; the limit is %d", store.ErrKnowledgeInvalid, len(ids), store.MaxKnowledgeBatch)
	}
	if !validKeys(orgID, agent) {
		return nil, nil
	}
	const q = `SELECT c.document_id, d.name, c.seq, c.text FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = ? AND c.agent = ? AND c.document_id = ? AND c.seq = ? AND d.agent = c.agent AND d.status = 'ready'`
	var out []store.KnowledgeHit
	for _, id := range ids {
		doc, seq, ok := store.ParseKnowledgeChunkID(id)
		if !ok || !store.ValidBlobKey(doc) {
			continue
		}
		rows, err := s.reader.QueryContext(ctx, q, orgID, agent, doc, seq)
		if err != nil {
			return nil, fmt.Errorf("sqlite: knowledge chunks: %w", err)
		}
		hs, err := scanKnowledgeHits(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: knowledge chunks: %w", err)
		}
		out = append(out, hs...)
	}
	return out, nil
}

// DocumentKnowledgeChunks returns the ready document's chunks from seq
// from, in order.
func (s *Store) DocumentKnowledgeChunks(ctx context.Context, orgID, agent, id string, from, limit int) ([]store.KnowledgeHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: document knowledge chunks: %w", err)
	}
	if !validKeys(orgID, agent, id) {
		return nil, nil
	}
	const q = `SELECT c.document_id, d.name, c.seq, c.text FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = ? AND c.agent = ? AND c.document_id = ? AND c.seq >= ? AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY c.seq LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, q, orgID, agent, id, max(from, 0), store.KnowledgeBatchSize(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: document knowledge chunks: %w", err)
	}
	out, err := scanKnowledgeHits(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: document knowledge chunks: %w", err)
	}
	return out, nil
}

// StaleKnowledgeChunks returns chunks of the agent's ready documents
// whose model is not model.
func (s *Store) StaleKnowledgeChunks(ctx context.Context, orgID, agent, model string, limit int) ([]store.KnowledgeHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stale knowledge chunks: %w", err)
	}
	if !validKeys(orgID, agent) {
		return nil, nil
	}
	const q = `SELECT c.document_id, d.name, c.seq, c.text FROM knowledge_chunks c
		JOIN knowledge_documents d ON d.org_id = c.org_id AND d.id = c.document_id
		WHERE c.org_id = ? AND c.agent = ? AND c.model <> ? AND d.agent = c.agent AND d.status = 'ready'
		ORDER BY c.document_id, c.seq LIMIT ?`
	rows, err := s.reader.QueryContext(ctx, q, orgID, agent, model, store.KnowledgeBatchSize(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: stale knowledge chunks: %w", err)
	}
	out, err := scanKnowledgeHits(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stale knowledge chunks: %w", err)
	}
	return out, nil
}

// SetKnowledgeVectors replaces the named chunks' vectors in one write
// transaction.
func (s *Store) SetKnowledgeVectors(ctx context.Context, orgID, agent string, vs []store.KnowledgeVector) (int64, error) {
	if err := store.CheckKnowledgeVectors(vs); err != nil {
		return 0, fmt.Errorf("sqlite: set knowledge vectors: %w", err)
	}
	if !validKeys(orgID, agent) {
		return 0, nil
	}
	var n int64
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		for _, v := range vs {
			res, err := tx.ExecContext(ctx, `UPDATE knowledge_chunks SET model = ?, vector = ?
				WHERE org_id = ? AND agent = ? AND document_id = ? AND seq = ?`,
				v.Model, []byte(v.Vector), orgID, agent, v.DocumentID, v.Seq)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: set knowledge vectors: %w", err)
	}
	return n, nil
}
