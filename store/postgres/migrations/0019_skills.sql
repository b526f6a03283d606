-- 0019: an organisation's skills in the Agent Skills folder format, and
-- the agents they are attached to (store.Skills), as store/sqlite's 0028.
--
-- A skill's SKILL.md is its document; the other files of its folder are
-- rows of skill_files, their bytes inline (at most 1 MiB each, 8 MiB a
-- skill: store.MaxSkillFileBytes, store.MaxSkillTotalBytes).

CREATE TABLE skills (
    org_id      text COLLATE "C" NOT NULL,
    name        text COLLATE "C" NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 64),
    description text NOT NULL CHECK (char_length(description) BETWEEN 1 AND 1024),
    -- store.MaxSkillDocumentBytes (256 KiB): the store refuses a longer
    -- one itself; this is the backstop.
    document    text NOT NULL CHECK (octet_length(document) BETWEEN 1 AND 262144),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (org_id, name)
);

CREATE TABLE skill_files (
    org_id text COLLATE "C" NOT NULL,
    skill  text COLLATE "C" NOT NULL,
    path   text COLLATE "C" NOT NULL CHECK (octet_length(path) BETWEEN 1 AND 1024),
    data   bytea NOT NULL CHECK (octet_length(data) <= 1048576),
    PRIMARY KEY (org_id, skill, path)
);

CREATE TABLE agent_skills (
    org_id     text COLLATE "C" NOT NULL,
    agent      text COLLATE "C" NOT NULL,
    skill      text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, agent, skill)
);

-- DeleteSkill detaches the skill from every agent.
CREATE INDEX agent_skills_by_skill ON agent_skills (org_id, skill);
