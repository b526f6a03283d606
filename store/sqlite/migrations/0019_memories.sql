-- 0019: long-term memories (store.Memories).
--
-- owner_id is the person a memory belongs to, '' for one the
-- organisation shares. model is the embedding model that made vector
-- (embed.Model.String), vector its embed.Packed form: a search by vector
-- reads only the rows of the model asked for.

CREATE TABLE memories (
    org_id     TEXT NOT NULL,
    id         TEXT NOT NULL,
    owner_id   TEXT NOT NULL DEFAULT '',
    -- store.MaxMemoryRunes (2,000) characters: the store refuses a longer
    -- text itself; this is the backstop.
    text       TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    model      TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 255),
    vector     BLOB NOT NULL CHECK (typeof(vector) = 'blob' AND length(vector) BETWEEN 6 AND 8197),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- ListMemories newest first, CountMemories and the quota check, and
-- MemoryVectors (an owner's rows, then the shared ones).
CREATE INDEX memories_by_owner ON memories (org_id, owner_id, created_at, id);

-- What SearchMemories matches: each memory's store.MemoryTerms, joined
-- by spaces, in an FTS5 table ranked by BM25. The terms are made in Go
-- (folded, split, diacritics dropped as a second term) so that SQLite and
-- PostgreSQL index the same words; the ascii tokenizer then only splits
-- on the spaces (it keeps every non-ASCII character in a word). Derived
-- from memories: the store writes it with them, an import rebuilds it.
CREATE VIRTUAL TABLE memory_search USING fts5(
    terms,
    org_id UNINDEXED,
    owner_id UNINDEXED,
    memory_id UNINDEXED,
    tokenize = 'ascii'
);

-- Which memory_search row holds a memory's terms, so that an update or a
-- delete reaches it by rowid. Derived as memory_search is.
CREATE TABLE memory_search_rows (
    org_id    TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    search_id INTEGER NOT NULL,
    PRIMARY KEY (org_id, memory_id)
);
