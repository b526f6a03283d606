-- 0022: files attached to conversations (store.Attachments).
--
-- The file itself is the blob of the same (org_id, id), written with the
-- attachment; this table holds what was extracted from it. Deleting the
-- conversation deletes every row here by (org_id, conversation_id), as
-- it deletes the blobs.

CREATE TABLE attachments (
    org_id          TEXT NOT NULL,
    id              TEXT NOT NULL,
    conversation_id TEXT NOT NULL CHECK (conversation_id <> ''),
    kind            TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL CHECK (status IN ('ready', 'unreadable')),
    error           TEXT NOT NULL DEFAULT '',
    chars           INTEGER NOT NULL DEFAULT 0,
    chunks          INTEGER NOT NULL DEFAULT 0,
    model           TEXT NOT NULL DEFAULT '',
    -- store.MaxAttachmentTextBytes (4 MiB): the store refuses longer
    -- text itself; this is the backstop.
    text            TEXT NOT NULL CHECK (length(CAST(text AS BLOB)) <= 4194304),
    PRIMARY KEY (org_id, id)
);

CREATE INDEX attachments_by_conversation ON attachments (org_id, conversation_id);

-- The chunks that index an attachment's text, with their vectors (empty
-- when the attachment has no model).
CREATE TABLE attachment_chunks (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    attachment_id   TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    text            TEXT NOT NULL CHECK (length(text) >= 1),
    vector          BLOB NOT NULL,
    PRIMARY KEY (org_id, attachment_id, seq)
);

CREATE INDEX attachment_chunks_by_conversation ON attachment_chunks (org_id, conversation_id, attachment_id, seq);

-- What SearchAttachments matches: each chunk's store.MemoryTerms, joined
-- by spaces, ranked by BM25, under the rowid of its attachment_chunks
-- row. Derived from attachment_chunks: the store writes it with them, an
-- import rebuilds it.
CREATE VIRTUAL TABLE attachment_chunk_search USING fts5(
    terms,
    org_id UNINDEXED,
    conversation_id UNINDEXED,
    tokenize = 'ascii'
);
