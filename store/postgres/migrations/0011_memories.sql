-- 0011: long-term memories (store.Memories), as store/sqlite's 0019.
--
-- owner_id is the person a memory belongs to, '' for one the
-- organisation shares. model is the embedding model that made vector
-- (embed.Model.String), vector its embed.Packed form: a search by vector
-- reads only the rows of the model asked for.

CREATE TABLE memories (
    org_id     text COLLATE "C" NOT NULL,
    id         text COLLATE "C" NOT NULL,
    owner_id   text COLLATE "C" NOT NULL DEFAULT '',
    -- store.MaxMemoryRunes (2,000) characters: the store refuses a longer
    -- text itself; this is the backstop.
    text       text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 2000),
    model      text COLLATE "C" NOT NULL CHECK (octet_length(model) BETWEEN 1 AND 255),
    vector     bytea NOT NULL CHECK (octet_length(vector) BETWEEN 6 AND 8197),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- ListMemories newest first, CountMemories and the quota check, and
-- MemoryVectors (an owner's rows, then the shared ones).
CREATE INDEX memories_by_owner ON memories (org_id, owner_id, created_at, id);

-- What SearchMemories matches: each memory's store.MemoryTerms as a
-- tsvector (array_to_tsvector: the terms are made in Go, folded, split,
-- diacritics dropped as a second term, so that PostgreSQL and SQLite
-- index the same words whatever the server's locale; the 'simple'
-- configuration's parser never sees them), ranked by ts_rank. Derived
-- from memories: the store writes it with them, an import rebuilds it.
CREATE TABLE memory_search (
    org_id    text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    owner_id  text COLLATE "C" NOT NULL,
    terms     tsvector NOT NULL,
    PRIMARY KEY (org_id, memory_id)
);

CREATE INDEX memory_search_terms ON memory_search USING gin (terms);
