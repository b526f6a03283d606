package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// blobColumns are the columns of a blob but its data, in scanBlob's order.
const blobColumns = `id, owner_id, conversation_id, name, media_type, size, sha256, created_at`

// blobQuotaLockClass is the first key of the transaction-scoped advisory
// lock a quota-checked PutBlob takes per owner (the ASCII of "blob"); the
// second is a hash of the organisation and owner. Two-key advisory locks
// never conflict with one-key ones (migrateLockKey).
const blobQuotaLockClass int32 = 0x626c6f62

// PutBlob validates b (store.CheckBlob) and stores it. Without a quota it
// is one INSERT. With one, the usage is read and the blob inserted in one
// transaction at READ COMMITTED that first takes an advisory lock on the
// owner: puts for one owner, from every replica, queue on it, and the
// usage statement, run after the lock is granted, sees every blob
// committed before (READ COMMITTED takes a snapshot per statement), so
// together they never break the quota. A taken ID is store.ErrExists
// either way (ON CONFLICT DO NOTHING inserts no row).
func (s *Store) PutBlob(ctx context.Context, b store.Blob, q store.BlobQuota) (store.Blob, error) {
	b, err := store.CheckBlob(b)
	if err != nil {
		return store.Blob{}, fmt.Errorf("postgres: put blob: %w", err)
	}
	if q == (store.BlobQuota{}) {
		b.CreatedAt, err = insertBlob(ctx, s.pool, b)
	} else {
		// A retried attempt must not see the failed one's zero time.
		var at time.Time
		err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
			var err error
			at, err = putWithinQuota(ctx, tx, b, q)
			return err
		})
		b.CreatedAt = at
	}
	if err != nil {
		return store.Blob{}, wrapErr("put blob", err)
	}
	b.Data = nil
	return b, nil
}

// putWithinQuota inserts b unless it breaks q, under the owner's lock.
func putWithinQuota(ctx context.Context, tx pgx.Tx, b store.Blob, q store.BlobQuota) (created time.Time, err error) {
	const lock = `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text || '/' || $3::text))`
	if _, err := tx.Exec(ctx, lock, blobQuotaLockClass, b.OrgID, b.OwnerID); err != nil {
		return time.Time{}, err
	}
	u, err := blobUsage(ctx, tx, b.OrgID, b.OwnerID)
	if err != nil {
		return time.Time{}, err
	}
	if err := store.CheckBlobQuota(u, b, q); err != nil {
		return time.Time{}, err
	}
	return insertBlob(ctx, tx, b)
}

// execer is what insertBlob and blobUsage run on: the pool or a
// transaction.
type execer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insertBlob inserts b, which CheckBlob returned, and returns its
// CreatedAt as stored (microseconds, UTC); a taken ID gives
// store.ErrExists.
func insertBlob(ctx context.Context, db execer, b store.Blob) (time.Time, error) {
	const q = `INSERT INTO blobs (org_id, id, owner_id, conversation_id, name,
			media_type, size, sha256, created_at, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (org_id, id) DO NOTHING
		RETURNING created_at`
	var created time.Time
	err := db.QueryRow(ctx, q, b.OrgID, b.ID, b.OwnerID, b.ConversationID, b.Name,
		b.MediaType, b.Size, b.SHA256, b.CreatedAt, b.Data).Scan(&created)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, fmt.Errorf("blob %q: %w", b.ID, store.ErrExists)
	}
	return utc(created), err
}

// GetBlob returns the blob with its data, or an error wrapping
// store.ErrNotFound when the organisation holds none with that ID.
func (s *Store) GetBlob(ctx context.Context, orgID, id string) (store.Blob, error) {
	b, err := s.readBlob(ctx, orgID, id, true)
	if err != nil {
		return store.Blob{}, wrapErr("get blob", err)
	}
	return b, nil
}

// StatBlob is GetBlob without the data.
func (s *Store) StatBlob(ctx context.Context, orgID, id string) (store.Blob, error) {
	b, err := s.readBlob(ctx, orgID, id, false)
	if err != nil {
		return store.Blob{}, wrapErr("stat blob", err)
	}
	return b, nil
}

// readBlob reads one blob, with its data when withData. A key PutBlob
// would refuse (a NUL, invalid UTF-8) finds nothing without a query:
// text would refuse it with an error instead.
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
	row := s.pool.QueryRow(ctx, `SELECT `+cols+` FROM blobs WHERE org_id = $1 AND id = $2`, orgID, id)
	return scanBlob(row, orgID, withData)
}

// scanBlob reads the blobColumns (and data when withData) of one row.
func scanBlob(row pgx.Row, orgID string, withData bool) (store.Blob, error) {
	b := store.Blob{OrgID: orgID}
	dest := []any{&b.ID, &b.OwnerID, &b.ConversationID, &b.Name, &b.MediaType, &b.Size, &b.SHA256, &b.CreatedAt}
	if withData {
		dest = append(dest, &b.Data)
	}
	if err := row.Scan(dest...); err != nil {
		return store.Blob{}, err
	}
	b.CreatedAt = utc(b.CreatedAt)
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
		return store.BlobList{}, wrapErr("list conversation blobs", err)
	}
	return l, nil
}

// ListOwnerBlobs returns one page of the owner's blobs, in (CreatedAt,
// ID) order, without data.
func (s *Store) ListOwnerBlobs(ctx context.Context, orgID, ownerID string, p store.BlobPage) (store.BlobList, error) {
	l, err := s.listBlobs(ctx, "owner_id", orgID, ownerID, p)
	if err != nil {
		return store.BlobList{}, wrapErr("list owner blobs", err)
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
		WHERE org_id = $1 AND ` + column + ` = $2 AND (created_at, id) > ($3, $4)
		ORDER BY created_at, id LIMIT $5`
	n := p.Size()
	rows, err := s.pool.Query(ctx, q, orgID, value, p.AfterCreatedAt, p.AfterID, n+1)
	if err != nil {
		return store.BlobList{}, err
	}
	defer rows.Close()
	var l store.BlobList
	for rows.Next() {
		b, err := scanBlob(rows, orgID, false)
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
	n, err := s.deleteBlobs(ctx, "id", orgID, id)
	if err == nil && n == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return wrapErr("delete blob", err)
	}
	return nil
}

// DeleteConversationBlobs deletes the conversation's blobs and returns
// how many.
func (s *Store) DeleteConversationBlobs(ctx context.Context, orgID, conversationID string) (int64, error) {
	if conversationID == "" {
		return 0, ctx.Err()
	}
	n, err := s.deleteBlobs(ctx, "conversation_id", orgID, conversationID)
	if err != nil {
		return 0, wrapErr("delete conversation blobs", err)
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
	tag, err := s.pool.Exec(ctx, `DELETE FROM blobs WHERE org_id = $1 AND `+column+` = $2`, orgID, value)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// BlobUsage returns the sum of sizes and the number of the owner's blobs.
func (s *Store) BlobUsage(ctx context.Context, orgID, ownerID string) (store.BlobUsage, error) {
	if err := ctx.Err(); err != nil {
		return store.BlobUsage{}, wrapErr("blob usage", err)
	}
	if !store.ValidBlobKey(orgID) || !store.ValidBlobKey(ownerID) {
		return store.BlobUsage{}, nil
	}
	u, err := blobUsage(ctx, s.pool, orgID, ownerID)
	if err != nil {
		return store.BlobUsage{}, wrapErr("blob usage", err)
	}
	return u, nil
}

// blobUsage sums the owner's blobs on db.
func blobUsage(ctx context.Context, db execer, orgID, ownerID string) (store.BlobUsage, error) {
	var u store.BlobUsage
	err := db.QueryRow(ctx, `SELECT coalesce(sum(size), 0)::bigint, count(*) FROM blobs
		WHERE org_id = $1 AND owner_id = $2`, orgID, ownerID).Scan(&u.Bytes, &u.Count)
	return u, err
}
