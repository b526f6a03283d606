package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// skillLockClass is the first key of the transaction-scoped advisory
// lock PutSkill takes (the ASCII of "skil"); the second is a hash of the
// organisation. Under it the count MaxSkillsPerOrg is checked against
// cannot change before the insert, from any replica.
const skillLockClass int32 = 0x736b696c

// validSkillKeys reports whether every key is text PostgreSQL takes: a
// key that is not names no row, so a read answers ErrNotFound rather than
// an encoding error.
func validSkillKeys(keys ...string) bool {
	for _, k := range keys {
		if !store.ValidBlobKey(k) {
			return false
		}
	}
	return true
}

// PutSkill validates s and, under the organisation's skill lock,
// replaces the skill of that name with its files or adds it.
func (s *Store) PutSkill(ctx context.Context, sk store.Skill) (store.Skill, error) {
	sk, err := store.CheckSkill(sk)
	if err != nil {
		return store.Skill{}, fmt.Errorf("postgres: put skill: %w", err)
	}
	created := sk.CreatedAt
	err = s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))`, skillLockClass, sk.OrgID); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `UPDATE skills SET description = $3, document = $4, updated_at = $5
			WHERE org_id = $1 AND name = $2 RETURNING created_at`, sk.OrgID, sk.Name, sk.Description, sk.Document, sk.UpdatedAt).Scan(&created)
		switch {
		case err == nil:
			if _, err := tx.Exec(ctx, `DELETE FROM skill_files WHERE org_id = $1 AND skill = $2`, sk.OrgID, sk.Name); err != nil {
				return err
			}
		case errors.Is(err, pgx.ErrNoRows):
			created = sk.CreatedAt
			var n int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM skills WHERE org_id = $1`, sk.OrgID).Scan(&n); err != nil {
				return err
			}
			if err := store.CheckSkillCount(n); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO skills (org_id, name, description, document, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6)`, sk.OrgID, sk.Name, sk.Description, sk.Document, sk.CreatedAt, sk.UpdatedAt); err != nil {
				return err
			}
		default:
			return err
		}
		for _, f := range sk.Files {
			data := f.Data
			if data == nil {
				data = []byte{}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO skill_files (org_id, skill, path, data) VALUES ($1, $2, $3, $4)`,
				sk.OrgID, sk.Name, f.Path, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.Skill{}, wrapErr("put skill", err)
	}
	sk.CreatedAt = utc(created)
	for i := range sk.Files {
		sk.Files[i].Data = nil
	}
	return sk, nil
}

// GetSkill reads the skill and its files' paths and sizes from one
// snapshot.
func (s *Store) GetSkill(ctx context.Context, orgID, name string) (store.Skill, error) {
	if !validSkillKeys(orgID, name) {
		return store.Skill{}, fmt.Errorf("postgres: get skill: %w", store.ErrNotFound)
	}
	var sk store.Skill
	err := s.inTx(ctx, repeatableRead, func(tx pgx.Tx) error {
		sk = store.Skill{OrgID: orgID, Name: name}
		err := tx.QueryRow(ctx, `SELECT description, document, created_at, updated_at FROM skills WHERE org_id = $1 AND name = $2`,
			orgID, name).Scan(&sk.Description, &sk.Document, &sk.CreatedAt, &sk.UpdatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("skill %q: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		sk.CreatedAt, sk.UpdatedAt = utc(sk.CreatedAt), utc(sk.UpdatedAt)
		files, err := skillFiles(ctx, tx, orgID, name)
		sk.Files = files
		sk.FileCount = len(files)
		for _, f := range files {
			sk.FileBytes += f.Size
		}
		return err
	})
	if err != nil {
		return store.Skill{}, wrapErr("get skill", err)
	}
	return sk, nil
}

// skillFiles returns the paths and sizes of the skill's files, by path.
func skillFiles(ctx context.Context, tx pgx.Tx, orgID, name string) ([]store.SkillFile, error) {
	rows, err := tx.Query(ctx, `SELECT path, octet_length(data) FROM skill_files WHERE org_id = $1 AND skill = $2 ORDER BY path`, orgID, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.SkillFile
	for rows.Next() {
		var f store.SkillFile
		if err := rows.Scan(&f.Path, &f.Size); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// ListSkills returns the organisation's skills by name.
func (s *Store) ListSkills(ctx context.Context, orgID string) ([]store.Skill, error) {
	sks, err := s.listSkills(ctx, `WHERE s.org_id = $1`, orgID)
	if err != nil {
		return nil, wrapErr("list skills", err)
	}
	return sks, nil
}

// AgentSkills returns the skills attached to the agent, by name.
func (s *Store) AgentSkills(ctx context.Context, orgID, agent string) ([]store.Skill, error) {
	sks, err := s.listSkills(ctx, `WHERE s.org_id = $1 AND s.name IN (SELECT skill FROM agent_skills WHERE org_id = $1 AND agent = $2)`, orgID, agent)
	if err != nil {
		return nil, wrapErr("agent skills", err)
	}
	return sks, nil
}

// listSkills reads the skills where selects, without documents or
// files: their files are counted and summed in the same query.
func (s *Store) listSkills(ctx context.Context, where string, args ...any) ([]store.Skill, error) {
	for _, a := range args {
		if k, _ := a.(string); !store.ValidBlobKey(k) {
			return []store.Skill{}, nil
		}
	}
	q := `SELECT s.org_id, s.name, s.description, s.created_at, s.updated_at, count(f.path), coalesce(sum(octet_length(f.data)), 0)
		FROM skills s LEFT JOIN skill_files f ON f.org_id = s.org_id AND f.skill = s.name ` + where +
		fmt.Sprintf(` GROUP BY s.org_id, s.name ORDER BY s.name LIMIT %d`, store.MaxSkillsPerOrg)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sks := []store.Skill{}
	for rows.Next() {
		var sk store.Skill
		if err := rows.Scan(&sk.OrgID, &sk.Name, &sk.Description, &sk.CreatedAt, &sk.UpdatedAt, &sk.FileCount, &sk.FileBytes); err != nil {
			return nil, err
		}
		sk.CreatedAt, sk.UpdatedAt = utc(sk.CreatedAt), utc(sk.UpdatedAt)
		sks = append(sks, sk)
	}
	return sks, rows.Err()
}

// ReadSkillFile reads one file's bytes.
func (s *Store) ReadSkillFile(ctx context.Context, orgID, name, path string) (store.SkillFile, error) {
	if !validSkillKeys(orgID, name, path) {
		return store.SkillFile{}, fmt.Errorf("postgres: read skill file: %w", store.ErrNotFound)
	}
	f := store.SkillFile{Path: path}
	err := s.pool.QueryRow(ctx, `SELECT data FROM skill_files WHERE org_id = $1 AND skill = $2 AND path = $3`,
		orgID, name, path).Scan(&f.Data)
	if err != nil {
		return store.SkillFile{}, wrapErr(fmt.Sprintf("read skill file %q", path), err)
	}
	if f.Data == nil {
		f.Data = []byte{}
	}
	f.Size = int64(len(f.Data))
	return f, nil
}

// DeleteSkill deletes the skill, its files and its attachments in one
// transaction.
func (s *Store) DeleteSkill(ctx context.Context, orgID, name string) error {
	if !validSkillKeys(orgID, name) {
		return fmt.Errorf("postgres: delete skill: %w", store.ErrNotFound)
	}
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM skills WHERE org_id = $1 AND name = $2`, orgID, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("skill %q: %w", name, store.ErrNotFound)
		}
		for _, table := range []string{"skill_files", "agent_skills"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE org_id = $1 AND skill = $2`, orgID, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrapErr("delete skill", err)
	}
	return nil
}

// AttachSkill attaches an existing skill to the agent. The skill's row is
// locked (FOR SHARE) so that a DeleteSkill cannot commit between the
// check and the insert and leave an attachment to nothing.
func (s *Store) AttachSkill(ctx context.Context, orgID, agent, name string, at time.Time) error {
	if err := store.CheckSkillAgent(agent); err != nil {
		return fmt.Errorf("postgres: attach skill: %w", err)
	}
	if !validSkillKeys(orgID, name) {
		return fmt.Errorf("postgres: attach skill: %w", store.ErrNotFound)
	}
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM skills WHERE org_id = $1 AND name = $2 FOR SHARE`, orgID, name).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("skill %q: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO agent_skills (org_id, agent, skill, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (org_id, agent, skill) DO NOTHING`, orgID, agent, name, at)
		return err
	})
	if err != nil {
		return wrapErr("attach skill", err)
	}
	return nil
}

// DetachSkill detaches the skill from the agent.
func (s *Store) DetachSkill(ctx context.Context, orgID, agent, name string) error {
	if !validSkillKeys(orgID, agent, name) {
		return fmt.Errorf("postgres: detach skill: %w", store.ErrNotFound)
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM agent_skills WHERE org_id = $1 AND agent = $2 AND skill = $3`, orgID, agent, name)
	if err != nil {
		return wrapErr("detach skill", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: detach skill %q from agent %q: %w", name, agent, store.ErrNotFound)
	}
	return nil
}

// DeleteAgentSkills detaches every skill from the agent.
func (s *Store) DeleteAgentSkills(ctx context.Context, orgID, agent string) (int64, error) {
	if !validSkillKeys(orgID, agent) {
		return 0, nil
	}
	var n int64
	err := s.inTx(ctx, readCommitted, func(tx pgx.Tx) error {
		var err error
		n, err = deleteAgentSkills(ctx, tx, orgID, agent)
		return err
	})
	if err != nil {
		return 0, wrapErr("delete agent skills", err)
	}
	return n, nil
}

// deleteAgentSkills deletes the agent's attachments in tx.
func deleteAgentSkills(ctx context.Context, tx pgx.Tx, orgID, agent string) (int64, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM agent_skills WHERE org_id = $1 AND agent = $2`, orgID, agent)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
