package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// attachmentColumns are an attachment's columns, from attachments a
// joined with its blob b, in scanAttachment's order.
const attachmentColumns = `a.id, b.owner_id, a.conversation_id, b.name, b.media_type, b.size, b.sha256,
	b.created_at, a.kind, a.status, a.error, a.chars, a.chunks, a.model`

const attachmentFrom = ` FROM attachments a JOIN blobs b ON b.org_id = a.org_id AND b.id = a.id `

// PutAttachment validates a (store.CheckAttachment), then, in one write
// transaction (SQLite's write lock held from BEGIN, so the usage read
// for q cannot change before the insert), refuses a taken ID and a
// conversation past q, and stores the blob, the attachment, its chunks
// and their full-text rows.
func (s *Store) PutAttachment(ctx context.Context, a store.NewAttachment, q store.AttachmentQuota) (store.Attachment, error) {
	a, err := store.CheckAttachment(a, q)
	if err != nil {
		return store.Attachment{}, fmt.Errorf("sqlite: put attachment: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := blobTaken(ctx, tx, a.OrgID, a.ID); err != nil {
			return err
		}
		u, err := attachmentUsage(ctx, tx, a.OrgID, a.ConversationID)
		if err != nil {
			return err
		}
		if err := store.CheckAttachmentQuota(u, a.Name, a.Size, q); err != nil {
			return err
		}
		if err := insertBlob(ctx, tx, a.Blob()); err != nil {
			return err
		}
		const ins = `INSERT INTO attachments (org_id, id, conversation_id, kind, status, error, chars, chunks, model, text)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
		if _, err := tx.ExecContext(ctx, ins, a.OrgID, a.ID, a.ConversationID, a.Kind, a.Status, a.Error,
			a.Chars, a.NumChunks, a.Model, a.Text); err != nil {
			return err
		}
		for _, c := range a.Chunks {
			if err := insertChunk(ctx, tx, a.Attachment, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.Attachment{}, fmt.Errorf("sqlite: put attachment: %w", err)
	}
	return a.Attachment, nil
}

// insertChunk inserts one chunk and its full-text row under the same
// rowid.
func insertChunk(ctx context.Context, tx *sql.Tx, a store.Attachment, c store.AttachmentChunk) error {
	vec := []byte(c.Vector)
	if vec == nil {
		vec = []byte{}
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO attachment_chunks (org_id, conversation_id, attachment_id, seq, text, vector)
		VALUES (?, ?, ?, ?, ?, ?)`, a.OrgID, a.ConversationID, a.ID, c.Seq, c.Text, vec)
	if err != nil {
		return err
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	return insertChunkTerms(ctx, tx, rowid, a.OrgID, a.ConversationID, c.Text)
}

func insertChunkTerms(ctx context.Context, tx *sql.Tx, rowid int64, orgID, conversationID, text string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO attachment_chunk_search (rowid, terms, org_id, conversation_id) VALUES (?, ?, ?, ?)`,
		rowid, strings.Join(store.MemoryTerms(text), " "), orgID, conversationID)
	return err
}

// rebuildAttachmentSearch writes the full-text row of every chunk, in
// tx: an import's step (the derived rows are not archived).
func rebuildAttachmentSearch(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, org_id, conversation_id, text FROM attachment_chunks ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("rebuild attachment search: %w", err)
	}
	type row struct {
		id              int64
		org, conv, text string
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.org, &r.conv, &r.text); err != nil {
			rows.Close()
			return fmt.Errorf("rebuild attachment search: %w", err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rebuild attachment search: %w", err)
	}
	for _, r := range all {
		if err := insertChunkTerms(ctx, tx, r.id, r.org, r.conv, r.text); err != nil {
			return fmt.Errorf("rebuild attachment search: %w", err)
		}
	}
	return nil
}

// deleteAttachmentSearch deletes the full-text rows of the chunks where
// (never from input) selects from attachment_chunks.
func deleteAttachmentSearch(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM attachment_chunk_search WHERE rowid IN
		(SELECT rowid FROM attachment_chunks WHERE `+where+`)`, args...)
	return err
}

func attachmentUsage(ctx context.Context, q queryRower, orgID, conversationID string) (store.AttachmentUsage, error) {
	var u store.AttachmentUsage
	err := q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(b.size), 0)`+attachmentFrom+
		`WHERE a.org_id = ? AND a.conversation_id = ?`, orgID, conversationID).Scan(&u.Count, &u.Bytes)
	return u, err
}

func scanAttachment(scan func(...any) error, orgID string) (store.Attachment, error) {
	a := store.Attachment{OrgID: orgID}
	var created string
	if err := scan(&a.ID, &a.OwnerID, &a.ConversationID, &a.Name, &a.MediaType, &a.Size, &a.SHA256,
		&created, &a.Kind, &a.Status, &a.Error, &a.Chars, &a.NumChunks, &a.Model); err != nil {
		return store.Attachment{}, err
	}
	var err error
	a.CreatedAt, err = decodeTime(created)
	return a, err
}

// GetAttachment returns the conversation's attachment.
func (s *Store) GetAttachment(ctx context.Context, orgID, conversationID, id string) (store.Attachment, error) {
	if err := ctx.Err(); err != nil {
		return store.Attachment{}, fmt.Errorf("sqlite: get attachment: %w", err)
	}
	if !validKeys(orgID, conversationID, id) {
		return store.Attachment{}, fmt.Errorf("sqlite: get attachment: %w", store.ErrNotFound)
	}
	row := s.reader.QueryRowContext(ctx, `SELECT `+attachmentColumns+attachmentFrom+
		`WHERE a.org_id = ? AND a.conversation_id = ? AND a.id = ?`, orgID, conversationID, id)
	a, err := scanAttachment(row.Scan, orgID)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Attachment{}, fmt.Errorf("sqlite: get attachment: %w", err)
	}
	return a, nil
}

// AttachmentData returns the attachment's file.
func (s *Store) AttachmentData(ctx context.Context, orgID, conversationID, id string) ([]byte, error) {
	return s.attachmentValue(ctx, "attachment data", `b.data`, orgID, conversationID, id)
}

// AttachmentText returns the attachment's extracted text.
func (s *Store) AttachmentText(ctx context.Context, orgID, conversationID, id string) (string, error) {
	v, err := s.attachmentValue(ctx, "attachment text", `CAST(a.text AS BLOB)`, orgID, conversationID, id)
	return string(v), err
}

// attachmentValue reads one column (never from input) of an attachment.
func (s *Store) attachmentValue(ctx context.Context, op, column, orgID, conversationID, id string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if !validKeys(orgID, conversationID, id) {
		return nil, fmt.Errorf("sqlite: %s: %w", op, store.ErrNotFound)
	}
	var v []byte
	err := s.reader.QueryRowContext(ctx, `SELECT `+column+attachmentFrom+
		`WHERE a.org_id = ? AND a.conversation_id = ? AND a.id = ?`, orgID, conversationID, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// ListAttachments returns the conversation's attachments, oldest first.
func (s *Store) ListAttachments(ctx context.Context, orgID, conversationID string) ([]store.Attachment, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list attachments: %w", err)
	}
	if !validKeys(orgID, conversationID) {
		return nil, nil
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT `+attachmentColumns+attachmentFrom+
		`WHERE a.org_id = ? AND a.conversation_id = ? ORDER BY b.created_at, a.id LIMIT ?`,
		orgID, conversationID, store.MaxAttachmentsPerConversation)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list attachments: %w", err)
	}
	defer rows.Close()
	var out []store.Attachment
	for rows.Next() {
		a, err := scanAttachment(rows.Scan, orgID)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list attachments: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list attachments: %w", err)
	}
	return out, nil
}

// CountAttachments returns how many files the conversation holds.
func (s *Store) CountAttachments(ctx context.Context, orgID, conversationID string) (int, error) {
	u, err := s.AttachmentUsage(ctx, orgID, conversationID)
	return int(u.Count), err
}

// AttachmentUsage returns what the conversation holds.
func (s *Store) AttachmentUsage(ctx context.Context, orgID, conversationID string) (store.AttachmentUsage, error) {
	if err := ctx.Err(); err != nil {
		return store.AttachmentUsage{}, fmt.Errorf("sqlite: attachment usage: %w", err)
	}
	if !validKeys(orgID, conversationID) {
		return store.AttachmentUsage{}, nil
	}
	u, err := attachmentUsage(ctx, s.reader, orgID, conversationID)
	if err != nil {
		return store.AttachmentUsage{}, fmt.Errorf("sqlite: attachment usage: %w", err)
	}
	return u, nil
}

// DeleteAttachment deletes the attachment, its blob, chunks and
// full-text rows in one write transaction.
func (s *Store) DeleteAttachment(ctx context.Context, orgID, conversationID, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: delete attachment: %w", err)
	}
	if !validKeys(orgID, conversationID, id) {
		return fmt.Errorf("sqlite: delete attachment: %w", store.ErrNotFound)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM attachments WHERE org_id = ? AND conversation_id = ? AND id = ?`,
			orgID, conversationID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, store.ErrNotFound)
		}
		if err := deleteAttachmentSearch(ctx, tx, `org_id = ? AND attachment_id = ?`, orgID, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM attachment_chunks WHERE org_id = ? AND attachment_id = ?`, orgID, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM blobs WHERE org_id = ? AND id = ?`, orgID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete attachment: %w", err)
	}
	return nil
}

// SearchAttachments matches the terms of s.Text (each a quoted FTS5
// string), any of them, ranked by bm25, within the conversation.
func (s *Store) SearchAttachments(ctx context.Context, sq store.AttachmentSearch) ([]store.AttachmentHit, error) {
	if err := store.CheckMemorySearch(store.MemorySearch{Text: sq.Text}); err != nil {
		return nil, fmt.Errorf("sqlite: search attachments: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search attachments: %w", err)
	}
	terms := store.MemoryTermLimit(sq.Text)
	if len(terms) == 0 || !validKeys(sq.OrgID, sq.ConversationID) {
		return nil, nil
	}
	const q = `SELECT c.attachment_id, b.name, c.seq, c.text
		FROM (SELECT rowid AS id, bm25(attachment_chunk_search) AS score FROM attachment_chunk_search
			WHERE attachment_chunk_search MATCH ? AND org_id = ? AND conversation_id = ?
			ORDER BY score, rowid LIMIT ?) s
		JOIN attachment_chunks c ON c.rowid = s.id
		JOIN blobs b ON b.org_id = c.org_id AND b.id = c.attachment_id
		ORDER BY s.score, c.attachment_id, c.seq`
	return s.chunkHits(ctx, "search attachments", q, FTSQuery(terms), sq.OrgID, sq.ConversationID, sq.Size())
}

// chunkHits runs q, which selects attachment_id, name, seq and text.
func (s *Store) chunkHits(ctx context.Context, op, q string, args ...any) ([]store.AttachmentHit, error) {
	rows, err := s.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer rows.Close()
	var out []store.AttachmentHit
	for rows.Next() {
		var h store.AttachmentHit
		if err := rows.Scan(&h.AttachmentID, &h.Name, &h.Seq, &h.Text); err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", op, err)
		}
		h.Ref = store.ChunkRef(h.AttachmentID, h.Seq)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return out, nil
}

// AttachmentVectors returns the vectors of model of the conversation's
// chunks, in (attachment, seq) order.
func (s *Store) AttachmentVectors(ctx context.Context, orgID, conversationID, model string) ([]retrieve.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: attachment vectors: %w", err)
	}
	if model == "" || !validKeys(orgID, conversationID, model) {
		return nil, nil
	}
	const q = `SELECT c.attachment_id, c.seq, c.vector FROM attachment_chunks c
		JOIN attachments a ON a.org_id = c.org_id AND a.id = c.attachment_id
		WHERE c.org_id = ? AND c.conversation_id = ? AND a.model = ?
		ORDER BY c.attachment_id, c.seq`
	rows, err := s.reader.QueryContext(ctx, q, orgID, conversationID, model)
	if err != nil {
		return nil, fmt.Errorf("sqlite: attachment vectors: %w", err)
	}
	defer rows.Close()
	var out []retrieve.Candidate
	for rows.Next() {
		var id string
		var seq int
		var v []byte
		if err := rows.Scan(&id, &seq, &v); err != nil {
			return nil, fmt.Errorf("sqlite: attachment vectors: %w", err)
		}
		out = append(out, retrieve.Candidate{ID: store.ChunkRef(id, seq), Vector: v})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: attachment vectors: %w", err)
	}
	return out, nil
}

// AttachmentChunks returns the chunks refs name, in the order of refs.
func (s *Store) AttachmentChunks(ctx context.Context, orgID, conversationID string, refs []string) ([]store.AttachmentHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: attachment chunks: %w", err)
	}
	refs = store.AttachmentRefs(refs)
	if len(refs) == 0 || !validKeys(orgID, conversationID) {
		return nil, nil
	}
	var out []store.AttachmentHit
	for _, ref := range refs {
		id, seq, _ := store.ParseChunkRef(ref)
		const q = `SELECT c.attachment_id, b.name, c.seq, c.text FROM attachment_chunks c
			JOIN blobs b ON b.org_id = c.org_id AND b.id = c.attachment_id
			WHERE c.org_id = ? AND c.conversation_id = ? AND c.attachment_id = ? AND c.seq = ?`
		hits, err := s.chunkHits(ctx, "attachment chunks", q, orgID, conversationID, id, seq)
		if err != nil {
			return nil, err
		}
		out = append(out, hits...)
	}
	return out, nil
}
