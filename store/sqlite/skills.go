package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/quiverhq/quiver/store"
)

// PutSkill validates s and, in one write transaction (the write lock
// held from BEGIN, so the count cannot change before the insert),
// replaces the skill of that name with its files or adds it.
func (s *Store) PutSkill(ctx context.Context, sk store.Skill) (store.Skill, error) {
	sk, err := store.CheckSkill(sk)
	if err != nil {
		return store.Skill{}, fmt.Errorf("sqlite: put skill: %w", err)
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var created string
		err := tx.QueryRowContext(ctx, `SELECT created_at FROM skills WHERE org_id = ? AND name = ?`, sk.OrgID, sk.Name).Scan(&created)
		switch {
		case err == nil:
			if sk.CreatedAt, err = decodeTime(created); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE skills SET description = ?, document = ?, updated_at = ? WHERE org_id = ? AND name = ?`,
				sk.Description, sk.Document, encodeTime(sk.UpdatedAt), sk.OrgID, sk.Name); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM skill_files WHERE org_id = ? AND skill = ?`, sk.OrgID, sk.Name); err != nil {
				return err
			}
		case errors.Is(err, sql.ErrNoRows):
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM skills WHERE org_id = ?`, sk.OrgID).Scan(&n); err != nil {
				return err
			}
			if err := store.CheckSkillCount(n); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO skills (org_id, name, description, document, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
				sk.OrgID, sk.Name, sk.Description, sk.Document, encodeTime(sk.CreatedAt), encodeTime(sk.UpdatedAt)); err != nil {
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
			if _, err := tx.ExecContext(ctx, `INSERT INTO skill_files (org_id, skill, path, data) VALUES (?, ?, ?, ?)`,
				sk.OrgID, sk.Name, f.Path, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.Skill{}, fmt.Errorf("sqlite: put skill: %w", err)
	}
	for i := range sk.Files {
		sk.Files[i].Data = nil
	}
	return sk, nil
}

// GetSkill reads the skill and its files' paths and sizes from one
// snapshot.
func (s *Store) GetSkill(ctx context.Context, orgID, name string) (store.Skill, error) {
	if !validKeys(orgID, name) {
		return store.Skill{}, fmt.Errorf("sqlite: get skill: %w", store.ErrNotFound)
	}
	var sk store.Skill
	err := s.inReadTx(ctx, func(tx *sql.Tx) error {
		var created, updated string
		sk = store.Skill{OrgID: orgID, Name: name}
		err := tx.QueryRowContext(ctx, `SELECT description, document, created_at, updated_at FROM skills WHERE org_id = ? AND name = ?`,
			orgID, name).Scan(&sk.Description, &sk.Document, &created, &updated)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("skill %q: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if sk.CreatedAt, err = decodeTime(created); err != nil {
			return err
		}
		if sk.UpdatedAt, err = decodeTime(updated); err != nil {
			return err
		}
		files, err := skillFiles(ctx, tx, orgID, name)
		sk.Files = files
		sk.FileCount = len(files)
		for _, f := range files {
			sk.FileBytes += f.Size
		}
		return err
	})
	if err != nil {
		return store.Skill{}, fmt.Errorf("sqlite: get skill: %w", err)
	}
	return sk, nil
}

// skillFiles returns the paths and sizes of the skill's files, by path.
func skillFiles(ctx context.Context, tx *sql.Tx, orgID, name string) ([]store.SkillFile, error) {
	rows, err := tx.QueryContext(ctx, `SELECT path, length(data) FROM skill_files WHERE org_id = ? AND skill = ? ORDER BY path`, orgID, name)
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
	sks, err := s.listSkills(ctx, `WHERE s.org_id = ?1`, orgID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list skills: %w", err)
	}
	return sks, nil
}

// AgentSkills returns the skills attached to the agent, by name.
func (s *Store) AgentSkills(ctx context.Context, orgID, agent string) ([]store.Skill, error) {
	sks, err := s.listSkills(ctx, `WHERE s.org_id = ?1 AND s.name IN (SELECT skill FROM agent_skills WHERE org_id = ?1 AND agent = ?2)`, orgID, agent)
	if err != nil {
		return nil, fmt.Errorf("sqlite: agent skills: %w", err)
	}
	return sks, nil
}

// skillListColumns are a listed skill's columns, its files counted and
// summed in the same query; skillListTail groups and orders them.
const (
	skillListColumns = `SELECT s.org_id, s.name, s.description, s.created_at, s.updated_at, count(f.path), coalesce(sum(length(f.data)), 0)
		FROM skills s LEFT JOIN skill_files f ON f.org_id = s.org_id AND f.skill = s.name `
	skillListTail = ` GROUP BY s.org_id, s.name ORDER BY s.name LIMIT `
)

// listSkills reads the skills where selects, without documents or
// files.
func (s *Store) listSkills(ctx context.Context, where string, args ...any) ([]store.Skill, error) {
	if !validKeys(stringArgs(args)...) {
		return []store.Skill{}, nil
	}
	rows, err := s.reader.QueryContext(ctx, skillListColumns+where+skillListTail+strconv.Itoa(store.MaxSkillsPerOrg), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sks := []store.Skill{}
	for rows.Next() {
		var sk store.Skill
		var created, updated string
		if err := rows.Scan(&sk.OrgID, &sk.Name, &sk.Description, &created, &updated, &sk.FileCount, &sk.FileBytes); err != nil {
			return nil, err
		}
		if sk.CreatedAt, err = decodeTime(created); err != nil {
			return nil, err
		}
		if sk.UpdatedAt, err = decodeTime(updated); err != nil {
			return nil, err
		}
		sks = append(sks, sk)
	}
	return sks, rows.Err()
}

// stringArgs returns args as strings (every argument of listSkills is
// one).
func stringArgs(args []any) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i], _ = a.(string)
	}
	return out
}

// ReadSkillFile reads one file's bytes.
func (s *Store) ReadSkillFile(ctx context.Context, orgID, name, path string) (store.SkillFile, error) {
	if !validKeys(orgID, name, path) {
		return store.SkillFile{}, fmt.Errorf("sqlite: read skill file: %w", store.ErrNotFound)
	}
	f := store.SkillFile{Path: path}
	err := s.reader.QueryRowContext(ctx, `SELECT data FROM skill_files WHERE org_id = ? AND skill = ? AND path = ?`,
		orgID, name, path).Scan(&f.Data)
	if errors.Is(err, sql.ErrNoRows) {
		return store.SkillFile{}, fmt.Errorf("sqlite: read skill file %q: %w", path, store.ErrNotFound)
	}
	if err != nil {
		return store.SkillFile{}, fmt.Errorf("sqlite: read skill file: %w", err)
	}
	if f.Data == nil {
		f.Data = []byte{}
	}
	f.Size = int64(len(f.Data))
	return f, nil
}

// DeleteSkill deletes the skill, its files and its attachments in one
// write transaction.
func (s *Store) DeleteSkill(ctx context.Context, orgID, name string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM skills WHERE org_id = ? AND name = ?`, orgID, name)
		if err != nil {
			return err
		}
		if err := changedOr(res, store.ErrNotFound); err != nil {
			return fmt.Errorf("skill %q: %w", name, err)
		}
		for _, table := range []string{"skill_files", "agent_skills"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE org_id = ? AND skill = ?`, orgID, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete skill: %w", err)
	}
	return nil
}

// AttachSkill attaches an existing skill to the agent.
func (s *Store) AttachSkill(ctx context.Context, orgID, agent, name string, at time.Time) error {
	if err := store.CheckSkillAgent(agent); err != nil {
		return fmt.Errorf("sqlite: attach skill: %w", err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM skills WHERE org_id = ? AND name = ?`, orgID, name).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("skill %q: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO agent_skills (org_id, agent, skill, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (org_id, agent, skill) DO NOTHING`, orgID, agent, name, encodeTime(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: attach skill: %w", err)
	}
	return nil
}

// DetachSkill detaches the skill from the agent.
func (s *Store) DetachSkill(ctx context.Context, orgID, agent, name string) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM agent_skills WHERE org_id = ? AND agent = ? AND skill = ?`, orgID, agent, name)
		if err != nil {
			return err
		}
		if err := changedOr(res, store.ErrNotFound); err != nil {
			return fmt.Errorf("skill %q on agent %q: %w", name, agent, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: detach skill: %w", err)
	}
	return nil
}

// DeleteAgentSkills detaches every skill from the agent.
func (s *Store) DeleteAgentSkills(ctx context.Context, orgID, agent string) (int64, error) {
	var n int64
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = deleteAgentSkills(ctx, tx, orgID, agent)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete agent skills: %w", err)
	}
	return n, nil
}

// deleteAgentSkills deletes the agent's attachments in tx.
func deleteAgentSkills(ctx context.Context, tx *sql.Tx, orgID, agent string) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM agent_skills WHERE org_id = ? AND agent = ?`, orgID, agent)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
