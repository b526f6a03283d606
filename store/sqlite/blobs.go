package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// blobColumns are the columns of a blob but its data, in scanBlob's order.
const blobColumns = `id, owner_id, conversation_id, name, media_type, size, sha256, created_at`

// PutBlob validates b (store.CheckBlob), then, in one write transaction,
// refuses an ID taken in the organisation (store.ErrExists) and a blob
// that would break q (store.ErrBlobQuota), and stores it. The write
// transaction holds SQLite's write lock from BEGIN, so the usage it reads
// for q cannot change before the insert, in this process or another.
func (s *Store) PutBlob(ctx context.Context, b store.Blob, q store.BlobQuota) (store.Blob, error) {
	b, err := store.CheckBlob(b)
	if err != nil {
		return store.Blob{}, fmt.Errorf("sqlite: put blob: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if err := blobTaken(ctx, tx, b.OrgID, b.ID); err != nil {
			return err
		}
		if q != (store.BlobQuota{}) {
			u, err := blobUsage(ctx, tx, b.OrgID, b.OwnerID)
			if err != nil {
				return err
			}
			if err := store.CheckBlobQuota(u, b, q); err != nil {
				return err
			}
		}
		return insertBlob(ctx, tx, b)
	})
	if err != nil {
		return store.Blob{}, fmt.Errorf("sqlite: put blob: %w", err)
	}
	b.Data = nil
	return b, nil
}

// blobTaken returns store.ErrExists when the organisation holds a blob
// with that ID.
func blobTaken(ctx context.Context, tx *sql.Tx, orgID, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM blobs WHERE org_id = ? AND id = ?`, orgID, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("blob %q: %w", id, store.ErrExists)
}

// insertBlob inserts b, which CheckBlob returned.
func insertBlob(ctx context.Context, tx *sql.Tx, b store.Blob) error {
	const q = `INSERT INTO blobs (org_id, id, owner_id, conversation_id, name,
			media_type, size, sha256, created_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	_, err := tx.ExecContext(ctx, q, b.OrgID, b.ID, b.OwnerID, b.ConversationID, b.Name,
		b.MediaType, b.Size, b.SHA256, encodeTime(b.CreatedAt), b.Data)
	return err
}

// GetBlob returns the blob with its data, or an error wrapping
// store.ErrNotFound when the organisation holds none with that ID.
func (s *Store) GetBlob(ctx context.Context, orgID, id string) (store.Blob, error) {
	b, err := s.readBlob(ctx, orgID, id, true)
	if err != nil {
		return store.Blob{}, fmt.Errorf("sqlite: get blob: %w", err)
	}
	return b, nil
}

// StatBlob is GetBlob without the data.
func (s *Store) StatBlob(ctx context.Context, orgID, id string) (store.Blob, error) {
	b, err := s.readBlob(ctx, orgID, id, false)
	if err != nil {
		return store.Blob{}, fmt.Errorf("sqlite: stat blob: %w", err)
	}
	return b, nil
}

// readBlob reads one blob, with its data when withData.
func (s *Store) readBlob(ctx context.Context, orgID, id string, withData bool) (store.Blob, error) {
	if err := ctx.Err(); err != nil {
		return store.Blob{}, err
	}
	if !store.ValidBlobKey(orgID) || !store.ValidBlobKey(id) {
		return store.Blob{}, store.ErrNotFound
	}
	cols := blobColumns
	if withData {
		cols += ", data"
	}
	row := s.reader.QueryRowContext(ctx, `SELECT `+cols+` FROM blobs WHERE org_id = ? AND id = ?`, orgID, id)
	b, err := scanBlob(row.Scan, orgID, withData)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	return b, err
}

// scanBlob reads the blobColumns (and data when withData) of one row.
func scanBlob(scan func(...any) error, orgID string, withData bool) (store.Blob, error) {
	b := store.Blob{OrgID: orgID}
	var createdAt string
	dest := []any{&b.ID, &b.OwnerID, &b.ConversationID, &b.Name, &b.MediaType, &b.Size, &b.SHA256, &createdAt}
	if withData {
		dest = append(dest, &b.Data)
	}
	if err := scan(dest...); err != nil {
		return store.Blob{}, err
	}
	var err error
	if b.CreatedAt, err = decodeTime(createdAt); err != nil {
		return store.Blob{}, err
	}
	if withData && b.Data == nil {
		b.Data = []byte{}
	}
	return b, nil
}

// ListConversationBlobs returns one page of the conversation's blobs, in
// (CreatedAt, ID) order, without data.
func (s *Store) ListConversationBlobs(ctx context.Context, orgID, conversationID string, p store.BlobPage) (store.BlobList, error) {
	l, err := s.listBlobs(ctx, "conversation_id", orgID, conversationID, p)
	if err != nil {
		return store.BlobList{}, fmt.Errorf("sqlite: list conversation blobs: %w", err)
	}
	return l, nil
}

// ListOwnerBlobs returns one page of the owner's blobs, in (CreatedAt,
// ID) order, without data.
func (s *Store) ListOwnerBlobs(ctx context.Context, orgID, ownerID string, p store.BlobPage) (store.BlobList, error) {
	l, err := s.listBlobs(ctx, "owner_id", orgID, ownerID, p)
	if err != nil {
		return store.BlobList{}, fmt.Errorf("sqlite: list owner blobs: %w", err)
	}
	return l, nil
}

// listBlobs returns one page of the organisation's blobs whose column
// (conversation_id or owner_id, never from input) is value. It asks for
// one row more than the page to learn whether more follow.
func (s *Store) listBlobs(ctx context.Context, column, orgID, value string, p store.BlobPage) (store.BlobList, error) {
	if err := ctx.Err(); err != nil {
		return store.BlobList{}, err
	}
	if value == "" || !store.ValidBlobKey(orgID) || !store.ValidBlobKey(value) || !store.ValidBlobKey(p.AfterID) {
		return store.BlobList{}, nil
	}
	q := `SELECT ` + blobColumns + ` FROM blobs
		WHERE org_id = ? AND ` + column + ` = ? AND (created_at, id) > (?, ?)
		ORDER BY created_at, id LIMIT ?`
	n := p.Size()
	rows, err := s.reader.QueryContext(ctx, q, orgID, value, encodeTime(p.AfterCreatedAt), p.AfterID, n+1)
	if err != nil {
		return store.BlobList{}, err
	}
	defer rows.Close()
	var l store.BlobList
	for rows.Next() {
		b, err := scanBlob(rows.Scan, orgID, false)
		if err != nil {
			return store.BlobList{}, err
		}
		l.Blobs = append(l.Blobs, b)
	}
	if err := rows.Err(); err != nil {
		return store.BlobList{}, err
	}
	if len(l.Blobs) > n {
		l.Blobs, l.More = l.Blobs[:n], true
	}
	return l, nil
}

// DeleteBlob deletes the blob, or returns an error wrapping
// store.ErrNotFound when the organisation holds none with that ID.
func (s *Store) DeleteBlob(ctx context.Context, orgID, id string) error {
	n, err := s.deleteBlobs(ctx, `id`, orgID, id)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete blob: %w", err)
	}
	return nil
}

// DeleteConversationBlobs deletes the conversation's blobs and returns
// how many.
func (s *Store) DeleteConversationBlobs(ctx context.Context, orgID, conversationID string) (int64, error) {
	if conversationID == "" {
		return 0, ctx.Err()
	}
	n, err := s.deleteBlobs(ctx, `conversation_id`, orgID, conversationID)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete conversation blobs: %w", err)
	}
	return n, nil
}

// deleteBlobs deletes the organisation's blobs whose column (id or
// conversation_id, never from input) is value.
func (s *Store) deleteBlobs(ctx context.Context, column, orgID, value string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if !store.ValidBlobKey(orgID) || !store.ValidBlobKey(value) {
		return 0, nil
	}
	res, err := s.writer.ExecContext(ctx, `DELETE FROM blobs WHERE org_id = ? AND `+column+` = ?`, orgID, value)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// BlobUsage returns the sum of sizes and the number of the owner's blobs.
func (s *Store) BlobUsage(ctx context.Context, orgID, ownerID string) (store.BlobUsage, error) {
	if err := ctx.Err(); err != nil {
		return store.BlobUsage{}, fmt.Errorf("sqlite: blob usage: %w", err)
	}
	if !store.ValidBlobKey(orgID) || !store.ValidBlobKey(ownerID) {
		return store.BlobUsage{}, nil
	}
	u, err := blobUsage(ctx, s.reader, orgID, ownerID)
	if err != nil {
		return store.BlobUsage{}, fmt.Errorf("sqlite: blob usage: %w", err)
	}
	return u, nil
}

// blobUsage sums the owner's blobs through q: the reader pool or a write
// transaction.
func blobUsage(ctx context.Context, q queryRower, orgID, ownerID string) (store.BlobUsage, error) {
	var u store.BlobUsage
	err := q.QueryRowContext(ctx, `SELECT coalesce(sum(size), 0), count(*) FROM blobs
		WHERE org_id = ? AND owner_id = ?`, orgID, ownerID).Scan(&u.Bytes, &u.Count)
	return u, err
}
