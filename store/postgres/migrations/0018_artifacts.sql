-- 0018: artifacts, the documents a person keeps (store.Artifacts), as
-- store/sqlite's 0027.
--
-- An artifact is one row here with its saved versions in
-- artifact_versions and, for a visual kind (HTML, SVG), at most one draft
-- in its own columns. Deleting the conversation deletes both tables' rows
-- by (org_id, conversation_id).

CREATE TABLE artifacts (
    org_id           text COLLATE "C" NOT NULL,
    id               text COLLATE "C" NOT NULL,
    conversation_id  text COLLATE "C" NOT NULL CHECK (conversation_id <> ''),
    owner_id         text COLLATE "C" NOT NULL,
    title            text NOT NULL CHECK (octet_length(title) <= 200),
    kind             text NOT NULL CHECK (kind IN ('markdown', 'html', 'svg', 'csv', 'code', 'mermaid')),
    language         text NOT NULL DEFAULT '',
    version          bigint NOT NULL CHECK (version BETWEEN 0 AND 100),
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    -- The draft: NULL content when there is none. draft_rev counts the
    -- draft changes and is never reused; inspected_rev is the one last
    -- inspected.
    draft            text CHECK (draft IS NULL OR octet_length(draft) <= 1048576),
    draft_rev        bigint NOT NULL DEFAULT 0,
    inspected_rev    bigint NOT NULL DEFAULT 0,
    draft_title      text NOT NULL DEFAULT '',
    draft_change     text NOT NULL DEFAULT '',
    draft_patch      text NOT NULL DEFAULT '',
    draft_updated_at timestamptz,
    PRIMARY KEY (org_id, id)
);

CREATE INDEX artifacts_by_conversation ON artifacts (org_id, conversation_id, created_at, id);

CREATE TABLE artifact_versions (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    artifact_id     text COLLATE "C" NOT NULL,
    version         bigint NOT NULL CHECK (version BETWEEN 1 AND 100),
    title           text NOT NULL,
    change          text NOT NULL CHECK (change IN ('create', 'rewrite', 'update')),
    patch           text NOT NULL DEFAULT '' CHECK (octet_length(patch) <= 262144),
    -- store.MaxArtifactBytes (1 MiB): the store refuses longer content
    -- itself; this is the backstop.
    content         text NOT NULL CHECK (octet_length(content) <= 1048576),
    checked         boolean NOT NULL DEFAULT false,
    turn_id         text COLLATE "C" NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (org_id, artifact_id, version)
);

CREATE INDEX artifact_versions_by_conversation ON artifact_versions (org_id, conversation_id, artifact_id, version);
