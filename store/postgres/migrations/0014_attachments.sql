-- 0014: files attached to conversations (store.Attachments), as
-- store/sqlite's 0022.
--
-- The file itself is the blob of the same (org_id, id), written with the
-- attachment; this table holds what was extracted from it. Deleting the
-- conversation deletes every row here by (org_id, conversation_id), as
-- it deletes the blobs.

CREATE TABLE attachments (
    org_id          text COLLATE "C" NOT NULL,
    id              text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL CHECK (conversation_id <> ''),
    kind            text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('ready', 'unreadable')),
    error           text NOT NULL DEFAULT '',
    chars           bigint NOT NULL DEFAULT 0,
    chunks          bigint NOT NULL DEFAULT 0,
    model           text COLLATE "C" NOT NULL DEFAULT '',
    -- store.MaxAttachmentTextBytes (4 MiB): the store refuses longer
    -- text itself; this is the backstop.
    text            text NOT NULL CHECK (octet_length(text) <= 4194304),
    PRIMARY KEY (org_id, id)
);

CREATE INDEX attachments_by_conversation ON attachments (org_id, conversation_id);

-- The chunks that index an attachment's text, with their vectors (empty
-- when the attachment has no model).
CREATE TABLE attachment_chunks (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    attachment_id   text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL,
    text            text NOT NULL CHECK (char_length(text) >= 1),
    vector          bytea NOT NULL,
    PRIMARY KEY (org_id, attachment_id, seq)
);

CREATE INDEX attachment_chunks_by_conversation ON attachment_chunks (org_id, conversation_id, attachment_id, seq);

-- What SearchAttachments matches: each chunk's store.MemoryTerms as a
-- tsvector, ranked by ts_rank. Derived from attachment_chunks: the store
-- writes it with them, an import rebuilds it.
CREATE TABLE attachment_chunk_search (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    attachment_id   text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL,
    terms           tsvector NOT NULL,
    PRIMARY KEY (org_id, attachment_id, seq)
);

CREATE INDEX attachment_chunk_search_by_conversation ON attachment_chunk_search (org_id, conversation_id);
CREATE INDEX attachment_chunk_search_terms ON attachment_chunk_search USING gin (terms);
