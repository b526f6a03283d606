package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// artifactColumns are an artifact's columns in scanArtifact's order.
const artifactColumns = `id, owner_id, conversation_id, title, kind, language, version, created_at, updated_at,
	draft, draft_rev, inspected_rev, draft_title, draft_change, draft_patch, draft_updated_at`

// artifactUsageQuery sums what a conversation's artifacts hold, as
// store.ArtifactBytes counts it.
const artifactUsageQuery = `SELECT
	(SELECT count(*) FROM artifacts WHERE org_id = ?1 AND conversation_id = ?2),
	(SELECT coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(patch AS BLOB))), 0)
		FROM artifact_versions WHERE org_id = ?1 AND conversation_id = ?2) +
	(SELECT coalesce(sum(length(CAST(draft AS BLOB)) + length(CAST(draft_patch AS BLOB))), 0)
		FROM artifacts WHERE org_id = ?1 AND conversation_id = ?2 AND draft IS NOT NULL)`

func artifactUsage(ctx context.Context, q queryRower, orgID, conversationID string) (store.ArtifactUsage, error) {
	var u store.ArtifactUsage
	err := q.QueryRowContext(ctx, artifactUsageQuery, orgID, conversationID).Scan(&u.Count, &u.Bytes)
	return u, err
}

// CreateArtifact validates a (store.CheckArtifact) and, in one write
// transaction (the write lock held from BEGIN, so the usage read cannot
// change before the insert), refuses a taken ID and a conversation past
// q, and stores the artifact with its first version or draft.
func (s *Store) CreateArtifact(ctx context.Context, a store.NewArtifact, q store.ArtifactQuota) (store.Artifact, error) {
	a, err := store.CheckArtifact(a)
	if err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: create artifact: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM artifacts WHERE org_id = ? AND id = ?`, a.OrgID, a.ID).Scan(&one)
		if err == nil {
			return fmt.Errorf("artifact %q: %w", a.ID, store.ErrExists)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		u, err := artifactUsage(ctx, tx, a.OrgID, a.ConversationID)
		if err != nil {
			return err
		}
		content := a.Content
		if a.Draft != nil {
			content = a.Draft.Content
		}
		if err := store.CheckArtifactQuota(u, 1, store.ArtifactBytes(content, ""), q); err != nil {
			return err
		}
		var draft sql.NullString
		var draftAt sql.NullString
		draftRev, draftTitle, draftChange := 0, "", ""
		if d := a.Draft; d != nil {
			draft = sql.NullString{String: d.Content, Valid: true}
			draftRev, draftTitle, draftChange, draftAt = d.Rev, d.Title, d.Change, encodeOptionalTime(d.UpdatedAt)
		}
		const ins = `INSERT INTO artifacts (org_id, id, conversation_id, owner_id, title, kind, language, version,
			created_at, updated_at, draft, draft_rev, draft_title, draft_change, draft_updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
		if _, err := tx.ExecContext(ctx, ins, a.OrgID, a.ID, a.ConversationID, a.OwnerID, a.Title, a.Kind, a.Language,
			a.Version, encodeTime(a.CreatedAt), encodeTime(a.UpdatedAt), draft, draftRev, draftTitle, draftChange, draftAt); err != nil {
			return err
		}
		if a.Draft != nil {
			return nil
		}
		return insertArtifactVersion(ctx, tx, a.OrgID, a.ConversationID, store.ArtifactVersion{ArtifactID: a.ID, Version: 1,
			Title: a.Title, Change: store.ArtifactCreate, Content: a.Content, TurnID: a.TurnID, CreatedAt: a.CreatedAt})
	})
	if err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: create artifact: %w", err)
	}
	return a.Artifact, nil
}

func insertArtifactVersion(ctx context.Context, tx *sql.Tx, orgID, conversationID string, v store.ArtifactVersion) error {
	const ins = `INSERT INTO artifact_versions (org_id, conversation_id, artifact_id, version, title, change, patch,
		content, checked, turn_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	_, err := tx.ExecContext(ctx, ins, orgID, conversationID, v.ArtifactID, v.Version, v.Title, v.Change, v.Patch,
		v.Content, v.Checked, v.TurnID, encodeTime(v.CreatedAt))
	return err
}

// ChangeArtifact validates c (store.CheckArtifactChange) and, in one
// write transaction, checks its base, the versions and the quota, then
// stores it as a new version or as the draft.
func (s *Store) ChangeArtifact(ctx context.Context, c store.ArtifactChange, q store.ArtifactQuota) (store.Artifact, error) {
	c, err := store.CheckArtifactChange(c)
	if err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: change artifact: %w", err)
	}
	var out store.Artifact
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		a, err := getArtifact(ctx, tx, c.OrgID, c.ConversationID, c.ID)
		if err != nil {
			return err
		}
		next, err := store.ApplyArtifactChange(a, c)
		if err != nil {
			return err
		}
		if grow := next.Bytes - a.Bytes(); grow > 0 {
			u, err := artifactUsage(ctx, tx, c.OrgID, c.ConversationID)
			if err != nil {
				return err
			}
			if err := store.CheckArtifactQuota(u, 0, grow, q); err != nil {
				return err
			}
		}
		if err := writeArtifactState(ctx, tx, next); err != nil {
			return err
		}
		out = next.Artifact
		return nil
	})
	if err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: change artifact: %w", err)
	}
	return out, nil
}

// writeArtifactState writes what store.ApplyArtifactChange (or
// SaveArtifactDraft's store.SaveDraft) made: the artifact's row and, when
// it has one, the new version.
func writeArtifactState(ctx context.Context, tx *sql.Tx, n store.ArtifactState) error {
	a := n.Artifact
	var draft, at sql.NullString
	title, change, patch := "", "", ""
	if d := a.Draft; d != nil {
		draft = sql.NullString{String: d.Content, Valid: true}
		title, change, patch, at = d.Title, d.Change, d.Patch, encodeOptionalTime(d.UpdatedAt)
	}
	const upd = `UPDATE artifacts SET title = ?, version = ?, updated_at = ?, draft = ?, draft_rev = ?, inspected_rev = ?,
		draft_title = ?, draft_change = ?, draft_patch = ?, draft_updated_at = ?
		WHERE org_id = ? AND conversation_id = ? AND id = ?`
	if _, err := tx.ExecContext(ctx, upd, a.Title, a.Version, encodeTime(a.UpdatedAt), draft, n.DraftRev, n.InspectedRev,
		title, change, patch, at, a.OrgID, a.ConversationID, a.ID); err != nil {
		return err
	}
	if n.NewVersion == nil {
		return nil
	}
	return insertArtifactVersion(ctx, tx, a.OrgID, a.ConversationID, *n.NewVersion)
}

// MarkArtifactInspected records that draft rev was inspected.
func (s *Store) MarkArtifactInspected(ctx context.Context, orgID, conversationID, id string, rev int) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		a, err := getArtifact(ctx, tx, orgID, conversationID, id)
		if err != nil {
			return err
		}
		if err := store.CheckInspection(a, rev); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE artifacts SET inspected_rev = ? WHERE org_id = ? AND conversation_id = ? AND id = ?`,
			rev, orgID, conversationID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark artifact inspected: %w", err)
	}
	return nil
}

// SaveArtifactDraft makes the inspected draft a new version.
func (s *Store) SaveArtifactDraft(ctx context.Context, orgID, conversationID, id, turnID string, at time.Time) (store.Artifact, error) {
	var out store.Artifact
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		a, err := getArtifact(ctx, tx, orgID, conversationID, id)
		if err != nil {
			return err
		}
		next, err := store.SaveDraft(a, turnID, at)
		if err != nil {
			return err
		}
		if err := writeArtifactState(ctx, tx, next); err != nil {
			return err
		}
		out = next.Artifact
		return nil
	})
	if err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: save artifact draft: %w", err)
	}
	return out, nil
}

// getArtifact reads the artifact with its newest content and draft.
func getArtifact(ctx context.Context, q queryRower, orgID, conversationID, id string) (store.StoredArtifact, error) {
	if !store.ValidBlobKey(orgID) || !store.ValidBlobKey(conversationID) || !store.ValidBlobKey(id) {
		return store.StoredArtifact{}, store.ErrNotFound
	}
	row := q.QueryRowContext(ctx, `SELECT `+artifactColumns+`,
		coalesce((SELECT content FROM artifact_versions v WHERE v.org_id = a.org_id AND v.artifact_id = a.id AND v.version = a.version), ''),
		(SELECT coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(patch AS BLOB))), 0) FROM artifact_versions v
			WHERE v.org_id = a.org_id AND v.artifact_id = a.id)
		FROM artifacts a WHERE org_id = ? AND conversation_id = ? AND id = ?`, orgID, conversationID, id)
	var sa store.StoredArtifact
	var content string
	a, err := scanArtifact(func(dst ...any) error {
		return row.Scan(append(dst, &content, &sa.VersionBytes)...)
	}, orgID, &sa)
	if errors.Is(err, sql.ErrNoRows) {
		return store.StoredArtifact{}, store.ErrNotFound
	}
	if err != nil {
		return store.StoredArtifact{}, err
	}
	a.Content = content
	sa.Artifact = a
	return sa, nil
}

// scanArtifact scans artifactColumns (and what extra adds through scan)
// into an artifact of orgID; the draft's Rev and InspectedRev go into sa
// too, kept when there is no draft.
func scanArtifact(scan func(...any) error, orgID string, sa *store.StoredArtifact) (store.Artifact, error) {
	a := store.Artifact{OrgID: orgID}
	var created, updated string
	var draft, draftAt sql.NullString
	var d store.ArtifactDraft
	if err := scan(&a.ID, &a.OwnerID, &a.ConversationID, &a.Title, &a.Kind, &a.Language, &a.Version, &created, &updated,
		&draft, &d.Rev, &d.InspectedRev, &d.Title, &d.Change, &d.Patch, &draftAt); err != nil {
		return store.Artifact{}, err
	}
	var err error
	if a.CreatedAt, err = decodeTime(created); err != nil {
		return store.Artifact{}, err
	}
	if a.UpdatedAt, err = decodeTime(updated); err != nil {
		return store.Artifact{}, err
	}
	if sa != nil {
		sa.DraftRev, sa.InspectedRev = d.Rev, d.InspectedRev
	}
	if draft.Valid {
		d.Content = draft.String
		if d.UpdatedAt, err = decodeOptionalTime(draftAt); err != nil {
			return store.Artifact{}, err
		}
		a.Draft = &d
	}
	return a, nil
}

// GetArtifact returns the artifact with its newest content and draft.
func (s *Store) GetArtifact(ctx context.Context, orgID, conversationID, id string) (store.Artifact, error) {
	if err := ctx.Err(); err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: get artifact: %w", err)
	}
	sa, err := getArtifact(ctx, s.reader, orgID, conversationID, id)
	if err != nil {
		return store.Artifact{}, fmt.Errorf("sqlite: get artifact: %w", err)
	}
	return sa.Artifact, nil
}

// GetArtifactVersion returns one saved version with its content.
func (s *Store) GetArtifactVersion(ctx context.Context, orgID, conversationID, id string, version int) (store.ArtifactVersion, error) {
	if err := ctx.Err(); err != nil {
		return store.ArtifactVersion{}, fmt.Errorf("sqlite: get artifact version: %w", err)
	}
	rows, err := s.artifactVersions(ctx, `, content`, `AND version = ?`, orgID, conversationID, id, version)
	if err == nil && len(rows) == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.ArtifactVersion{}, fmt.Errorf("sqlite: get artifact version: %w", err)
	}
	return rows[0], nil
}

// ListArtifactVersions returns the artifact's versions without contents.
func (s *Store) ListArtifactVersions(ctx context.Context, orgID, conversationID, id string) ([]store.ArtifactVersion, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list artifact versions: %w", err)
	}
	if _, err := getArtifact(ctx, s.reader, orgID, conversationID, id); err != nil {
		return nil, fmt.Errorf("sqlite: list artifact versions: %w", err)
	}
	rows, err := s.artifactVersions(ctx, ``, ``, orgID, conversationID, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list artifact versions: %w", err)
	}
	return rows, nil
}

// artifactVersions reads the artifact's versions, oldest first; content
// (never from input) adds the content column, where a condition.
func (s *Store) artifactVersions(ctx context.Context, content, where string, orgID, conversationID, id string, args ...any) ([]store.ArtifactVersion, error) {
	q := `SELECT version, title, change, patch, length(CAST(content AS BLOB)), checked, turn_id, created_at` + content + `
		FROM artifact_versions WHERE org_id = ? AND conversation_id = ? AND artifact_id = ? ` + where + ` ORDER BY version`
	rows, err := s.reader.QueryContext(ctx, q, append([]any{orgID, conversationID, id}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ArtifactVersion
	for rows.Next() {
		v := store.ArtifactVersion{ArtifactID: id}
		var created string
		dst := []any{&v.Version, &v.Title, &v.Change, &v.Patch, &v.Size, &v.Checked, &v.TurnID, &created}
		if content != "" {
			dst = append(dst, &v.Content)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		if v.CreatedAt, err = decodeTime(created); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListArtifacts returns the conversation's artifacts without contents.
func (s *Store) ListArtifacts(ctx context.Context, orgID, conversationID string) ([]store.Artifact, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list artifacts: %w", err)
	}
	rows, err := s.reader.QueryContext(ctx, `SELECT `+artifactColumns+` FROM artifacts
		WHERE org_id = ? AND conversation_id = ? ORDER BY created_at, id LIMIT ?`, orgID, conversationID, store.MaxArtifactsPerConversation)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list artifacts: %w", err)
	}
	defer rows.Close()
	var out []store.Artifact
	for rows.Next() {
		a, err := scanArtifact(rows.Scan, orgID, nil)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list artifacts: %w", err)
		}
		if a.Draft != nil {
			a.Draft.Content = ""
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list artifacts: %w", err)
	}
	return out, nil
}

// ArtifactUsage returns what the conversation's artifacts hold.
func (s *Store) ArtifactUsage(ctx context.Context, orgID, conversationID string) (store.ArtifactUsage, error) {
	u, err := artifactUsage(ctx, s.reader, orgID, conversationID)
	if err != nil {
		return store.ArtifactUsage{}, fmt.Errorf("sqlite: artifact usage: %w", err)
	}
	return u, nil
}

// DeleteArtifact deletes the artifact with its versions and draft.
func (s *Store) DeleteArtifact(ctx context.Context, orgID, conversationID, id string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM artifacts WHERE org_id = ? AND conversation_id = ? AND id = ?`, orgID, conversationID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrNotFound
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM artifact_versions WHERE org_id = ? AND conversation_id = ? AND artifact_id = ?`,
			orgID, conversationID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete artifact: %w", err)
	}
	return nil
}
