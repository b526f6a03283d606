-- 0002: files kept in the database (attachments, artifacts), so that
-- every replica serves them; as store/sqlite's 0010. size and sha256 are
-- computed by the store from data; conversation_id is '' for a blob
-- outside any conversation. Keys are text COLLATE "C" (byte order, as on
-- SQLite); the store refuses keys and names that are not UTF-8 or hold a
-- NUL before they reach text.
--
-- data is bytea, not a large object: a bytea is a column like any other,
-- written and deleted in the row's own transaction (a large object is a
-- separate object with its own OID, kept until something unlinks it,
-- needs lo_* calls inside a transaction and is easily orphaned), and
-- pg_dump, logical replication and row-level deletes carry it with no
-- extra step. Large objects pay off past hundreds of MiB, read in
-- pieces; store.MaxBlobBytes (32 MiB) keeps every row small enough to
-- read whole, which TOAST stores out of line (compressed when that
-- helps) so that scanning the other columns never reads it.

CREATE TABLE blobs (
    org_id          text COLLATE "C" NOT NULL,
    id              text COLLATE "C" NOT NULL,
    owner_id        text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL DEFAULT '',
    name            text NOT NULL,
    media_type      text NOT NULL,
    -- store.MaxBlobBytes: the store refuses a larger blob itself, with a
    -- clear error; this is the backstop should a write ever skip the check.
    size            bigint NOT NULL CHECK (size BETWEEN 0 AND 33554432),
    sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    created_at      timestamptz NOT NULL,
    data            bytea NOT NULL CHECK (octet_length(data) = size),
    PRIMARY KEY (org_id, id)
);

-- ListConversationBlobs and DeleteConversationBlobs, in list order.
CREATE INDEX blobs_by_conversation
    ON blobs (org_id, conversation_id, created_at, id);

-- ListOwnerBlobs in list order; BlobUsage and the quota check from the
-- index alone (size is in it).
CREATE INDEX blobs_by_owner
    ON blobs (org_id, owner_id, created_at, id) INCLUDE (size);
