package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// attachmentColumns are an attachment's columns, from attachments a
// joined with its blob b, in scanAttachment's order.
const attachmentColumns = `a.id, b.owner_id, a.conversation_id, b.name, b.media_type, b.size, b.sha256,
	b.created_at, a.kind, a.status, a.error, a.chars, a.chunks, a.model`

const attachmentFrom = ` FROM attachments a JOIN blobs b ON b.org_id = a.org_id AND b.id = a.id `

// attachmentQuotaLockClass is the first key of the transaction-scoped
// advisory lock PutAttachment takes per conversation (the ASCII of
// "atch"); the second is a hash of the organisation and conversation.
const attachmentQuotaLockClass int32 = 0x61746368

// PutAttachment validates a (store.CheckAttachment) and stores the blob,
// the attachment, its chunks and their full-text rows in one transaction
// at READ COMMITTED that first takes an advisory lock on the
// conversation: puts to one conversation, from every replica, queue on
// it, and the usage read after the lock sees every file committed
// before, so together they never pass q.
func (s *Store) PutAttachment(ctx context.Context, a store.NewAttachment, q store.AttachmentQuota) (store.Attachment, error) {
	a, err := store.CheckAttachment(a, q)
	if err != nil {
		return store.Attachment{}, fmt.Errorf("postgres: put attachment: %w", err)
	}
	var created time.Time
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		const lock = `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text || '/' || $3::text))`
		if _, err := tx.Exec(ctx, lock, attachmentQuotaLockClass, a.OrgID, a.ConversationID); err != nil {
			return err
		}
		u, err := attachmentUsage(ctx, tx, a.OrgID, a.ConversationID)
		if err != nil {
			return err
		}
		if err := store.CheckAttachmentQuota(u, a.Name, a.Size, q); err != nil {
			return err
		}
		if created, err = insertBlob(ctx, tx, a.Blob()); err != nil {
			return err
		}
		const ins = `INSERT INTO attachments (org_id, id, conversation_id, kind, status, error, chars, chunks, model, text)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
		if _, err := tx.Exec(ctx, ins, a.OrgID, a.ID, a.ConversationID, a.Kind, a.Status, a.Error,
			a.Chars, a.NumChunks, a.Model, a.Text); err != nil {
			return err
		}
		return insertChunks(ctx, tx, a)
	})
	if err != nil {
		return store.Attachment{}, wrapErr("put attachment", err)
	}
	a.CreatedAt = created
	return a.Attachment, nil
}

// insertChunks inserts a's chunks and their full-text rows in one batch.
func insertChunks(ctx context.Context, tx pgx.Tx, a store.NewAttachment) error {
	if len(a.Chunks) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, c := range a.Chunks {
		vec := []byte(c.Vector)
		if vec == nil {
			vec = []byte{}
		}
		b.Queue(`INSERT INTO attachment_chunks (org_id, conversation_id, attachment_id, seq, text, vector)
			VALUES ($1, $2, $3, $4, $5, $6)`, a.OrgID, a.ConversationID, a.ID, c.Seq, c.Text, vec)
		b.Queue(putChunkTermsSQL, a.OrgID, a.ConversationID, a.ID, c.Seq, textArray(store.MemoryTerms(c.Text)))
	}
	return tx.SendBatch(ctx, &b).Close()
}

// putChunkTermsSQL writes a chunk's full-text row: $5 its terms.
const putChunkTermsSQL = `INSERT INTO attachment_chunk_search (org_id, conversation_id, attachment_id, seq, terms)
	VALUES ($1, $2, $3, $4, array_to_tsvector($5::text[]))`

// rebuildAttachmentSearch writes the full-text row of every chunk, in tx:
// an import's step (the derived rows are not archived).
func rebuildAttachmentSearch(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT org_id, conversation_id, attachment_id, seq, text FROM attachment_chunks
		ORDER BY org_id, attachment_id, seq`)
	if err != nil {
		return fmt.Errorf("rebuild attachment search: %w", err)
	}
	type chunk struct {
		org, conv, id, text string
		seq                 int
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chunk, error) {
		var c chunk
		err := r.Scan(&c.org, &c.conv, &c.id, &c.seq, &c.text)
		return c, err
	})
	if err != nil {
		return fmt.Errorf("rebuild attachment search: %w", err)
	}
	for _, c := range all {
		if _, err := tx.Exec(ctx, putChunkTermsSQL, c.org, c.conv, c.id, c.seq, textArray(store.MemoryTerms(c.text))); err != nil {
			return fmt.Errorf("rebuild attachment search: %w", err)
		}
	}
	return nil
}

func attachmentUsage(ctx context.Context, db execer, orgID, conversationID string) (store.AttachmentUsage, error) {
	var u store.AttachmentUsage
	err := db.QueryRow(ctx, `SELECT count(*), coalesce(sum(b.size), 0)`+attachmentFrom+
		`WHERE a.org_id = $1 AND a.conversation_id = $2`, orgID, conversationID).Scan(&u.Count, &u.Bytes)
	return u, err
}

func scanAttachment(scan func(...any) error, orgID string) (store.Attachment, error) {
	a := store.Attachment{OrgID: orgID}
	var created time.Time
	var chars, chunks int64
	if err := scan(&a.ID, &a.OwnerID, &a.ConversationID, &a.Name, &a.MediaType, &a.Size, &a.SHA256,
		&created, &a.Kind, &a.Status, &a.Error, &chars, &chunks, &a.Model); err != nil {
		return store.Attachment{}, err
	}
	a.CreatedAt, a.Chars, a.NumChunks = utc(created), int(chars), int(chunks)
	return a, nil
}

// GetAttachment returns the conversation's attachment.
func (s *Store) GetAttachment(ctx context.Context, orgID, conversationID, id string) (store.Attachment, error) {
	if err := ctx.Err(); err != nil {
		return store.Attachment{}, wrapErr("get attachment", err)
	}
	if !validKeys(orgID, conversationID, id) {
		return store.Attachment{}, wrapErr("get attachment", pgx.ErrNoRows)
	}
	row := s.pool.QueryRow(ctx, `SELECT `+attachmentColumns+attachmentFrom+
		`WHERE a.org_id = $1 AND a.conversation_id = $2 AND a.id = $3`, orgID, conversationID, id)
	a, err := scanAttachment(row.Scan, orgID)
	if err != nil {
		return store.Attachment{}, wrapErr("get attachment", err)
	}
	return a, nil
}

// AttachmentData returns the attachment's file.
func (s *Store) AttachmentData(ctx context.Context, orgID, conversationID, id string) ([]byte, error) {
	return s.attachmentValue(ctx, "attachment data", `b.data`, orgID, conversationID, id)
}

// AttachmentText returns the attachment's extracted text.
func (s *Store) AttachmentText(ctx context.Context, orgID, conversationID, id string) (string, error) {
	v, err := s.attachmentValue(ctx, "attachment text", `convert_to(a.text, 'UTF8')`, orgID, conversationID, id)
	return string(v), err
}

// attachmentValue reads one bytea column (never from input) of an
// attachment.
func (s *Store) attachmentValue(ctx context.Context, op, column, orgID, conversationID, id string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr(op, err)
	}
	if !validKeys(orgID, conversationID, id) {
		return nil, wrapErr(op, pgx.ErrNoRows)
	}
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT `+column+attachmentFrom+
		`WHERE a.org_id = $1 AND a.conversation_id = $2 AND a.id = $3`, orgID, conversationID, id).Scan(&v)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// ListAttachments returns the conversation's attachments, oldest first.
func (s *Store) ListAttachments(ctx context.Context, orgID, conversationID string) ([]store.Attachment, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("list attachments", err)
	}
	if !validKeys(orgID, conversationID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+attachmentColumns+attachmentFrom+
		`WHERE a.org_id = $1 AND a.conversation_id = $2 ORDER BY b.created_at, a.id LIMIT $3`,
		orgID, conversationID, store.MaxAttachmentsPerConversation)
	if err != nil {
		return nil, wrapErr("list attachments", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Attachment, error) {
		return scanAttachment(r.Scan, orgID)
	})
	if err != nil {
		return nil, wrapErr("list attachments", err)
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
		return store.AttachmentUsage{}, wrapErr("attachment usage", err)
	}
	if !validKeys(orgID, conversationID) {
		return store.AttachmentUsage{}, nil
	}
	u, err := attachmentUsage(ctx, s.pool, orgID, conversationID)
	if err != nil {
		return store.AttachmentUsage{}, wrapErr("attachment usage", err)
	}
	return u, nil
}

// DeleteAttachment deletes the attachment, its blob, chunks and
// full-text rows in one transaction.
func (s *Store) DeleteAttachment(ctx context.Context, orgID, conversationID, id string) error {
	if err := ctx.Err(); err != nil {
		return wrapErr("delete attachment", err)
	}
	if !validKeys(orgID, conversationID, id) {
		return wrapErr("delete attachment", pgx.ErrNoRows)
	}
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM attachments WHERE org_id = $1 AND conversation_id = $2 AND id = $3`,
			orgID, conversationID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return pgx.ErrNoRows
		}
		for _, q := range []string{
			`DELETE FROM attachment_chunk_search WHERE org_id = $1 AND attachment_id = $2`,
			`DELETE FROM attachment_chunks WHERE org_id = $1 AND attachment_id = $2`,
			`DELETE FROM blobs WHERE org_id = $1 AND id = $2`,
		} {
			if _, err := tx.Exec(ctx, q, orgID, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrapErr("delete attachment", err)
	}
	return nil
}

// SearchAttachments matches the terms of s.Text, any of them (TSQuery),
// ranked by ts_rank, within the conversation.
func (s *Store) SearchAttachments(ctx context.Context, sq store.AttachmentSearch) ([]store.AttachmentHit, error) {
	if err := store.CheckMemorySearch(store.MemorySearch{Text: sq.Text}); err != nil {
		return nil, fmt.Errorf("postgres: search attachments: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("search attachments", err)
	}
	terms := store.MemoryTermLimit(sq.Text)
	if len(terms) == 0 || !validKeys(sq.OrgID, sq.ConversationID) {
		return nil, nil
	}
	const q = `SELECT c.attachment_id, b.name, c.seq, c.text
		FROM attachment_chunk_search t
		JOIN attachment_chunks c ON c.org_id = t.org_id AND c.attachment_id = t.attachment_id AND c.seq = t.seq
		JOIN blobs b ON b.org_id = c.org_id AND b.id = c.attachment_id
		WHERE t.org_id = $1 AND t.conversation_id = $2 AND t.terms @@ $3::tsquery
		ORDER BY ts_rank(t.terms, $3::tsquery, 1) DESC, c.attachment_id, c.seq LIMIT $4`
	return s.chunkHits(ctx, "search attachments", q, sq.OrgID, sq.ConversationID, TSQuery(terms), sq.Size())
}

// chunkHits runs q, which selects attachment_id, name, seq and text.
func (s *Store) chunkHits(ctx context.Context, op, q string, args ...any) ([]store.AttachmentHit, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.AttachmentHit, error) {
		var h store.AttachmentHit
		var seq int64
		err := r.Scan(&h.AttachmentID, &h.Name, &seq, &h.Text)
		h.Seq = int(seq)
		h.Ref = store.ChunkRef(h.AttachmentID, h.Seq)
		return h, err
	})
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return out, nil
}

// AttachmentVectors returns the vectors of model of the conversation's
// chunks, in (attachment, seq) order.
func (s *Store) AttachmentVectors(ctx context.Context, orgID, conversationID, model string) ([]retrieve.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("attachment vectors", err)
	}
	if model == "" || !validKeys(orgID, conversationID, model) {
		return nil, nil
	}
	const q = `SELECT c.attachment_id, c.seq, c.vector FROM attachment_chunks c
		JOIN attachments a ON a.org_id = c.org_id AND a.id = c.attachment_id
		WHERE c.org_id = $1 AND c.conversation_id = $2 AND a.model = $3
		ORDER BY c.attachment_id, c.seq`
	rows, err := s.pool.Query(ctx, q, orgID, conversationID, model)
	if err != nil {
		return nil, wrapErr("attachment vectors", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (retrieve.Candidate, error) {
		var id string
		var seq int64
		var v []byte
		err := r.Scan(&id, &seq, &v)
		return retrieve.Candidate{ID: store.ChunkRef(id, int(seq)), Vector: v}, err
	})
	if err != nil {
		return nil, wrapErr("attachment vectors", err)
	}
	return out, nil
}

// AttachmentChunks returns the chunks refs name, in the order of refs.
func (s *Store) AttachmentChunks(ctx context.Context, orgID, conversationID string, refs []string) ([]store.AttachmentHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrapErr("attachment chunks", err)
	}
	refs = store.AttachmentRefs(refs)
	if len(refs) == 0 || !validKeys(orgID, conversationID) {
		return nil, nil
	}
	ids, seqs := make([]string, len(refs)), make([]int64, len(refs))
	for i, r := range refs {
		id, seq, _ := store.ParseChunkRef(r)
		ids[i], seqs[i] = id, int64(seq)
	}
	const q = `SELECT c.attachment_id, b.name, c.seq, c.text
		FROM unnest($3::text[], $4::bigint[]) WITH ORDINALITY AS r(id, seq, n)
		JOIN attachment_chunks c ON c.org_id = $1 AND c.conversation_id = $2 AND c.attachment_id = r.id AND c.seq = r.seq
		JOIN blobs b ON b.org_id = c.org_id AND b.id = c.attachment_id
		ORDER BY r.n`
	hits, err := s.chunkHits(ctx, "attachment chunks", q, orgID, conversationID, ids, seqs)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return hits, err
}
