package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// artifactColumns are an artifact's columns in scanArtifact's order.
const artifactColumns = `id, owner_id, conversation_id, title, kind, language, version, created_at, updated_at,
	draft, draft_rev, inspected_rev, draft_title, draft_change, draft_patch, draft_updated_at`

// artifactLockClass is the first key of the transaction-scoped advisory
// lock every artifact write takes per conversation (the ASCII of
// "artf"); the second is a hash of the organisation and conversation.
// Writes to one conversation, from every replica, queue on it, so the
// base and usage each reads after the lock hold until it commits.
const artifactLockClass int32 = 0x61727466

// inArtifactTx runs fn in a READ COMMITTED transaction holding the
// conversation's artifact lock.
func (s *Store) inArtifactTx(ctx context.Context, orgID, conversationID string, fn func(pgx.Tx) error) error {
	return s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		const lock = `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text || '/' || $3::text))`
		if _, err := tx.Exec(ctx, lock, artifactLockClass, orgID, conversationID); err != nil {
			return err
		}
		return fn(tx)
	})
}

func artifactUsage(ctx context.Context, db execer, orgID, conversationID string) (store.ArtifactUsage, error) {
	var u store.ArtifactUsage
	err := db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM artifacts WHERE org_id = $1 AND conversation_id = $2),
		(SELECT coalesce(sum(octet_length(content) + octet_length(patch)), 0)
			FROM artifact_versions WHERE org_id = $1 AND conversation_id = $2) +
		(SELECT coalesce(sum(octet_length(draft) + octet_length(draft_patch)), 0)
			FROM artifacts WHERE org_id = $1 AND conversation_id = $2 AND draft IS NOT NULL)`,
		orgID, conversationID).Scan(&u.Count, &u.Bytes)
	return u, err
}

// CreateArtifact validates a (store.CheckArtifact) and, in one
// transaction holding the conversation's artifact lock, refuses a taken
// ID and a conversation past q, and stores the artifact with its first
// version or draft.
func (s *Store) CreateArtifact(ctx context.Context, a store.NewArtifact, q store.ArtifactQuota) (store.Artifact, error) {
	a, err := store.CheckArtifact(a)
	if err != nil {
		return store.Artifact{}, fmt.Errorf("postgres: create artifact: %w", err)
	}
	err = s.inArtifactTx(ctx, a.OrgID, a.ConversationID, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM artifacts WHERE org_id = $1 AND id = $2`, a.OrgID, a.ID).Scan(&one)
		if err == nil {
			return fmt.Errorf("artifact %q: %w", a.ID, store.ErrExists)
		} else if !errors.Is(err, pgx.ErrNoRows) {
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
		var draft *string
		var draftAt *time.Time
		draftRev, draftTitle, draftChange := 0, "", ""
		if d := a.Draft; d != nil {
			draft, draftAt = &d.Content, &d.UpdatedAt
			draftRev, draftTitle, draftChange = d.Rev, d.Title, d.Change
		}
		const ins = `INSERT INTO artifacts (org_id, id, conversation_id, owner_id, title, kind, language, version,
			created_at, updated_at, draft, draft_rev, draft_title, draft_change, draft_updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`
		if _, err := tx.Exec(ctx, ins, a.OrgID, a.ID, a.ConversationID, a.OwnerID, a.Title, a.Kind, a.Language,
			a.Version, a.CreatedAt, a.UpdatedAt, draft, draftRev, draftTitle, draftChange, draftAt); err != nil {
			return err
		}
		if a.Draft != nil {
			return nil
		}
		return insertArtifactVersion(ctx, tx, a.OrgID, a.ConversationID, store.ArtifactVersion{ArtifactID: a.ID, Version: 1,
			Title: a.Title, Change: store.ArtifactCreate, Content: a.Content, TurnID: a.TurnID, CreatedAt: a.CreatedAt})
	})
	if err != nil {
		return store.Artifact{}, wrapErr("create artifact", err)
	}
	return a.Artifact, nil
}

func insertArtifactVersion(ctx context.Context, tx pgx.Tx, orgID, conversationID string, v store.ArtifactVersion) error {
	const ins = `INSERT INTO artifact_versions (org_id, conversation_id, artifact_id, version, title, change, patch,
		content, checked, turn_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
	_, err := tx.Exec(ctx, ins, orgID, conversationID, v.ArtifactID, v.Version, v.Title, v.Change, v.Patch,
		v.Content, v.Checked, v.TurnID, v.CreatedAt)
	return err
}

// ChangeArtifact validates c (store.CheckArtifactChange) and, in one
// transaction holding the conversation's artifact lock, checks its base,
// the versions and the quota, then stores it as a new version or as the
// draft.
func (s *Store) ChangeArtifact(ctx context.Context, c store.ArtifactChange, q store.ArtifactQuota) (store.Artifact, error) {
	c, err := store.CheckArtifactChange(c)
	if err != nil {
		return store.Artifact{}, fmt.Errorf("postgres: change artifact: %w", err)
	}
	var out store.Artifact
	err = s.inArtifactTx(ctx, c.OrgID, c.ConversationID, func(tx pgx.Tx) error {
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
		return store.Artifact{}, wrapErr("change artifact", err)
	}
	return out, nil
}

// writeArtifactState writes what store.ApplyArtifactChange or
// store.SaveDraft made: the artifact's row and, when it has one, the new
// version.
func writeArtifactState(ctx context.Context, tx pgx.Tx, n store.ArtifactState) error {
	a := n.Artifact
	var draft *string
	var at *time.Time
	title, change, patch := "", "", ""
	if d := a.Draft; d != nil {
		draft, at = &d.Content, &d.UpdatedAt
		title, change, patch = d.Title, d.Change, d.Patch
	}
	const upd = `UPDATE artifacts SET title = $1, version = $2, updated_at = $3, draft = $4, draft_rev = $5, inspected_rev = $6,
		draft_title = $7, draft_change = $8, draft_patch = $9, draft_updated_at = $10
		WHERE org_id = $11 AND conversation_id = $12 AND id = $13`
	if _, err := tx.Exec(ctx, upd, a.Title, a.Version, a.UpdatedAt, draft, n.DraftRev, n.InspectedRev,
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
	err := s.inArtifactTx(ctx, orgID, conversationID, func(tx pgx.Tx) error {
		a, err := getArtifact(ctx, tx, orgID, conversationID, id)
		if err != nil {
			return err
		}
		if err := store.CheckInspection(a, rev); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE artifacts SET inspected_rev = $1 WHERE org_id = $2 AND conversation_id = $3 AND id = $4`,
			rev, orgID, conversationID, id)
		return err
	})
	if err != nil {
		return wrapErr("mark artifact inspected", err)
	}
	return nil
}

// SaveArtifactDraft makes the inspected draft a new version.
func (s *Store) SaveArtifactDraft(ctx context.Context, orgID, conversationID, id, turnID string, at time.Time) (store.Artifact, error) {
	var out store.Artifact
	err := s.inArtifactTx(ctx, orgID, conversationID, func(tx pgx.Tx) error {
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
		return store.Artifact{}, wrapErr("save artifact draft", err)
	}
	return out, nil
}

// getArtifact reads the artifact with its newest content and draft.
func getArtifact(ctx context.Context, db execer, orgID, conversationID, id string) (store.StoredArtifact, error) {
	if !validKeys(orgID, conversationID, id) {
		return store.StoredArtifact{}, pgx.ErrNoRows
	}
	row := db.QueryRow(ctx, `SELECT `+artifactColumns+`,
		coalesce((SELECT content FROM artifact_versions v WHERE v.org_id = a.org_id AND v.artifact_id = a.id AND v.version = a.version), ''),
		(SELECT coalesce(sum(octet_length(content) + octet_length(patch)), 0) FROM artifact_versions v
			WHERE v.org_id = a.org_id AND v.artifact_id = a.id)
		FROM artifacts a WHERE org_id = $1 AND conversation_id = $2 AND id = $3`, orgID, conversationID, id)
	var sa store.StoredArtifact
	var content string
	a, err := scanArtifact(func(dst ...any) error {
		return row.Scan(append(dst, &content, &sa.VersionBytes)...)
	}, orgID, &sa)
	if err != nil {
		return store.StoredArtifact{}, err
	}
	a.Content = content
	sa.Artifact = a
	return sa, nil
}

// scanArtifact scans artifactColumns (and what scan adds) into an
// artifact of orgID; the draft counters go into sa too when it is not
// nil, kept when there is no draft.
func scanArtifact(scan func(...any) error, orgID string, sa *store.StoredArtifact) (store.Artifact, error) {
	a := store.Artifact{OrgID: orgID}
	var draft *string
	var draftAt *time.Time
	var d store.ArtifactDraft
	if err := scan(&a.ID, &a.OwnerID, &a.ConversationID, &a.Title, &a.Kind, &a.Language, &a.Version, &a.CreatedAt, &a.UpdatedAt,
		&draft, &d.Rev, &d.InspectedRev, &d.Title, &d.Change, &d.Patch, &draftAt); err != nil {
		return store.Artifact{}, err
	}
	a.CreatedAt, a.UpdatedAt = utc(a.CreatedAt), utc(a.UpdatedAt)
	if sa != nil {
		sa.DraftRev, sa.InspectedRev = d.Rev, d.InspectedRev
	}
	if draft != nil {
		d.Content, d.UpdatedAt = *draft, fromOptionalTime(draftAt)
		a.Draft = &d
	}
	return a, nil
}

// GetArtifact returns the artifact with its newest content and draft.
func (s *Store) GetArtifact(ctx context.Context, orgID, conversationID, id string) (store.Artifact, error) {
	sa, err := getArtifact(ctx, s.pool, orgID, conversationID, id)
	if err != nil {
		return store.Artifact{}, wrapErr("get artifact", err)
	}
	return sa.Artifact, nil
}

// GetArtifactVersion returns one saved version with its content.
func (s *Store) GetArtifactVersion(ctx context.Context, orgID, conversationID, id string, version int) (store.ArtifactVersion, error) {
	rows, err := s.artifactVersions(ctx, true, orgID, conversationID, id, version)
	if err == nil && len(rows) == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return store.ArtifactVersion{}, wrapErr("get artifact version", err)
	}
	return rows[0], nil
}

// ListArtifactVersions returns the artifact's versions without contents.
func (s *Store) ListArtifactVersions(ctx context.Context, orgID, conversationID, id string) ([]store.ArtifactVersion, error) {
	if _, err := getArtifact(ctx, s.pool, orgID, conversationID, id); err != nil {
		return nil, wrapErr("list artifact versions", err)
	}
	rows, err := s.artifactVersions(ctx, false, orgID, conversationID, id, 0)
	if err != nil {
		return nil, wrapErr("list artifact versions", err)
	}
	return rows, nil
}

// artifactVersions reads the artifact's versions, oldest first: all of
// them without content, or (one) version with it.
func (s *Store) artifactVersions(ctx context.Context, one bool, orgID, conversationID, id string, version int) ([]store.ArtifactVersion, error) {
	q := `SELECT version, title, change, patch, octet_length(content), checked, turn_id, created_at, ''
		FROM artifact_versions WHERE org_id = $1 AND conversation_id = $2 AND artifact_id = $3 ORDER BY version`
	args := []any{orgID, conversationID, id}
	if one {
		q = `SELECT version, title, change, patch, octet_length(content), checked, turn_id, created_at, content
			FROM artifact_versions WHERE org_id = $1 AND conversation_id = $2 AND artifact_id = $3 AND version = $4`
		args = append(args, version)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ArtifactVersion
	for rows.Next() {
		v := store.ArtifactVersion{ArtifactID: id}
		if err := rows.Scan(&v.Version, &v.Title, &v.Change, &v.Patch, &v.Size, &v.Checked, &v.TurnID, &v.CreatedAt, &v.Content); err != nil {
			return nil, err
		}
		v.CreatedAt = utc(v.CreatedAt)
		out = append(out, v)
	}
	return out, rows.Err()
}

// ListArtifacts returns the conversation's artifacts without contents.
func (s *Store) ListArtifacts(ctx context.Context, orgID, conversationID string) ([]store.Artifact, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+artifactColumns+` FROM artifacts
		WHERE org_id = $1 AND conversation_id = $2 ORDER BY created_at, id LIMIT $3`, orgID, conversationID, store.MaxArtifactsPerConversation)
	if err != nil {
		return nil, wrapErr("list artifacts", err)
	}
	defer rows.Close()
	var out []store.Artifact
	for rows.Next() {
		a, err := scanArtifact(rows.Scan, orgID, nil)
		if err != nil {
			return nil, wrapErr("list artifacts", err)
		}
		if a.Draft != nil {
			a.Draft.Content = ""
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr("list artifacts", err)
	}
	return out, nil
}

// ArtifactUsage returns what the conversation's artifacts hold.
func (s *Store) ArtifactUsage(ctx context.Context, orgID, conversationID string) (store.ArtifactUsage, error) {
	u, err := artifactUsage(ctx, s.pool, orgID, conversationID)
	if err != nil {
		return store.ArtifactUsage{}, wrapErr("artifact usage", err)
	}
	return u, nil
}

// DeleteArtifact deletes the artifact with its versions and draft.
func (s *Store) DeleteArtifact(ctx context.Context, orgID, conversationID, id string) error {
	err := s.inArtifactTx(ctx, orgID, conversationID, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM artifacts WHERE org_id = $1 AND conversation_id = $2 AND id = $3`, orgID, conversationID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return pgx.ErrNoRows
		}
		_, err = tx.Exec(ctx, `DELETE FROM artifact_versions WHERE org_id = $1 AND conversation_id = $2 AND artifact_id = $3`,
			orgID, conversationID, id)
		return err
	})
	if err != nil {
		return wrapErr("delete artifact", err)
	}
	return nil
}
