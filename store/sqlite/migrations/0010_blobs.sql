-- 0010: files kept in the database (attachments, artifacts), so that
-- every replica of a deployment serves them: one row per blob, its
-- content in data. size and sha256 are computed by the store from data;
-- conversation_id is '' for a blob outside any conversation. data is the
-- last column: SQLite then reads a row's other columns (lists, stats,
-- usage) without the overflow pages that hold a large blob.

CREATE TABLE blobs (
    org_id          TEXT NOT NULL,
    id              TEXT NOT NULL,
    owner_id        TEXT NOT NULL,
    conversation_id TEXT NOT NULL DEFAULT '',
    name            TEXT NOT NULL,
    media_type      TEXT NOT NULL,
    -- store.MaxBlobBytes: the store refuses a larger blob itself, with a
    -- clear error; this is the backstop should a write ever skip the check.
    size            INTEGER NOT NULL CHECK (size BETWEEN 0 AND 33554432),
    sha256          TEXT NOT NULL CHECK (length(sha256) = 64),
    created_at      TEXT NOT NULL,
    data            BLOB NOT NULL CHECK (typeof(data) = 'blob' AND length(data) = size),
    PRIMARY KEY (org_id, id)
);

-- ListConversationBlobs and DeleteConversationBlobs, in list order.
CREATE INDEX blobs_by_conversation
    ON blobs (org_id, conversation_id, created_at, id);

-- ListOwnerBlobs in list order; BlobUsage and the quota check from the
-- index alone (size is in it).
CREATE INDEX blobs_by_owner
    ON blobs (org_id, owner_id, created_at, id, size);
