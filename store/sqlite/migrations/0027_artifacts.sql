-- 0027: artifacts, the documents a person keeps (store.Artifacts).
--
-- An artifact is one row here with its saved versions in
-- artifact_versions and, for a visual kind (HTML, SVG), at most one draft
-- in its own columns. Deleting the conversation deletes both tables' rows
-- by (org_id, conversation_id).

CREATE TABLE artifacts (
    org_id           TEXT NOT NULL,
    id               TEXT NOT NULL,
    conversation_id  TEXT NOT NULL CHECK (conversation_id <> ''),
    owner_id         TEXT NOT NULL,
    title            TEXT NOT NULL CHECK (length(CAST(title AS BLOB)) <= 200),
    kind             TEXT NOT NULL CHECK (kind IN ('markdown', 'html', 'svg', 'csv', 'code', 'mermaid')),
    language         TEXT NOT NULL DEFAULT '',
    version          INTEGER NOT NULL CHECK (version BETWEEN 0 AND 100),
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    -- The draft: NULL content when there is none. draft_rev counts the
    -- draft changes and is never reused; inspected_rev is the one last
    -- inspected.
    draft            TEXT CHECK (draft IS NULL OR length(CAST(draft AS BLOB)) <= 1048576),
    draft_rev        INTEGER NOT NULL DEFAULT 0,
    inspected_rev    INTEGER NOT NULL DEFAULT 0,
    draft_title      TEXT NOT NULL DEFAULT '',
    draft_change     TEXT NOT NULL DEFAULT '',
    draft_patch      TEXT NOT NULL DEFAULT '',
    draft_updated_at TEXT,
    PRIMARY KEY (org_id, id)
);

CREATE INDEX artifacts_by_conversation ON artifacts (org_id, conversation_id, created_at, id);

CREATE TABLE artifact_versions (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    artifact_id     TEXT NOT NULL,
    version         INTEGER NOT NULL CHECK (version BETWEEN 1 AND 100),
    title           TEXT NOT NULL,
    change          TEXT NOT NULL CHECK (change IN ('create', 'rewrite', 'update')),
    patch           TEXT NOT NULL DEFAULT '' CHECK (length(CAST(patch AS BLOB)) <= 262144),
    -- store.MaxArtifactBytes (1 MiB): the store refuses longer content
    -- itself; this is the backstop.
    content         TEXT NOT NULL CHECK (length(CAST(content AS BLOB)) <= 1048576),
    checked         INTEGER NOT NULL DEFAULT 0,
    turn_id         TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, artifact_id, version)
);

CREATE INDEX artifact_versions_by_conversation ON artifact_versions (org_id, conversation_id, artifact_id, version);
