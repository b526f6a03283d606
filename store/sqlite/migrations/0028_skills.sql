-- 0028: an organisation's skills in the Agent Skills folder format, and
-- the agents they are attached to (store.Skills).
--
-- A skill's SKILL.md is its document; the other files of its folder are
-- rows of skill_files, their bytes inline (at most 1 MiB each, 8 MiB a
-- skill: store.MaxSkillFileBytes, store.MaxSkillTotalBytes).

CREATE TABLE skills (
    org_id      TEXT NOT NULL,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    description TEXT NOT NULL CHECK (length(description) BETWEEN 1 AND 1024),
    -- store.MaxSkillDocumentBytes (256 KiB): the store refuses a longer
    -- one itself; this is the backstop.
    document    TEXT NOT NULL CHECK (length(CAST(document AS BLOB)) BETWEEN 1 AND 262144),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (org_id, name)
);

CREATE TABLE skill_files (
    org_id TEXT NOT NULL,
    skill  TEXT NOT NULL,
    path   TEXT NOT NULL CHECK (length(path) BETWEEN 1 AND 1024),
    data   BLOB NOT NULL CHECK (typeof(data) = 'blob' AND length(data) <= 1048576),
    PRIMARY KEY (org_id, skill, path)
);

CREATE TABLE agent_skills (
    org_id     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    skill      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, agent, skill)
);

-- DeleteSkill detaches the skill from every agent.
CREATE INDEX agent_skills_by_skill ON agent_skills (org_id, skill);
