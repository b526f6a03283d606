-- 0023: the documents attached to agents as knowledge (store.Knowledge).
--
-- A document's text lives in its chunks, each with the embedding model
-- that made its vector (embed.Model.String; '' with an empty vector when
-- none was configured): a search by vector reads only the rows of the
-- model asked for, and a re-index rewrites the others.

CREATE TABLE knowledge_documents (
    org_id     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    id         TEXT NOT NULL,
    name       TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    media_type TEXT NOT NULL CHECK (length(media_type) BETWEEN 1 AND 255),
    size       INTEGER NOT NULL CHECK (size >= 0),
    status     TEXT NOT NULL CHECK (status IN ('indexing', 'ready', 'failed')),
    reason     TEXT NOT NULL DEFAULT '',
    -- chunks stored, and chunks the document makes (0 until extracted).
    chunks     INTEGER NOT NULL DEFAULT 0 CHECK (chunks >= 0),
    total      INTEGER NOT NULL DEFAULT 0 CHECK (total >= 0),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- ListKnowledgeDocuments, the per-agent count and HasKnowledge.
CREATE INDEX knowledge_documents_by_agent ON knowledge_documents (org_id, agent, created_at, id);

CREATE TABLE knowledge_chunks (
    org_id      TEXT NOT NULL,
    document_id TEXT NOT NULL,
    seq         INTEGER NOT NULL CHECK (seq >= 0),
    agent       TEXT NOT NULL,
    -- store.MaxKnowledgeChunkRunes (2,000): the store refuses a longer
    -- chunk itself; this is the backstop.
    text        TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    model       TEXT NOT NULL DEFAULT '' CHECK (length(model) <= 255),
    vector      BLOB NOT NULL DEFAULT X'' CHECK (typeof(vector) = 'blob' AND length(vector) <= 8197),
    PRIMARY KEY (org_id, document_id, seq)
);

-- KnowledgeVectors and StaleKnowledgeChunks (an agent's rows of one
-- model), and the per-agent chunk count.
CREATE INDEX knowledge_chunks_by_agent ON knowledge_chunks (org_id, agent, model);

-- What SearchKnowledge matches: each chunk's store.MemoryTerms joined by
-- spaces, as memory_search (0019). Written when a document turns ready,
-- so only ready documents are found; derived from knowledge_chunks (an
-- import rebuilds it).
CREATE VIRTUAL TABLE knowledge_search USING fts5(
    terms,
    org_id UNINDEXED,
    agent UNINDEXED,
    document_id UNINDEXED,
    seq UNINDEXED,
    tokenize = 'ascii'
);

-- Which knowledge_search rows hold a document's terms, so that a delete
-- reaches them by rowid. Derived as knowledge_search is.
CREATE TABLE knowledge_search_rows (
    org_id      TEXT NOT NULL,
    document_id TEXT NOT NULL,
    search_id   INTEGER NOT NULL,
    PRIMARY KEY (org_id, document_id, search_id)
);
