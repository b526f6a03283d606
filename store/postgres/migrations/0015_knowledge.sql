-- 0015: the documents attached to agents as knowledge (store.Knowledge),
-- as store/sqlite's 0023.
--
-- A document's text lives in its chunks, each with the embedding model
-- that made its vector (embed.Model.String; '' with an empty vector when
-- none was configured): a search by vector reads only the rows of the
-- model asked for, and a re-index rewrites the others.

CREATE TABLE knowledge_documents (
    org_id     text COLLATE "C" NOT NULL,
    agent      text COLLATE "C" NOT NULL,
    id         text COLLATE "C" NOT NULL,
    name       text NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 255),
    media_type text NOT NULL CHECK (octet_length(media_type) BETWEEN 1 AND 255),
    size       bigint NOT NULL CHECK (size >= 0),
    status     text NOT NULL CHECK (status IN ('indexing', 'ready', 'failed')),
    reason     text NOT NULL DEFAULT '',
    -- chunks stored, and chunks the document makes (0 until extracted).
    chunks     integer NOT NULL DEFAULT 0 CHECK (chunks >= 0),
    total      integer NOT NULL DEFAULT 0 CHECK (total >= 0),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- ListKnowledgeDocuments, the per-agent count and HasKnowledge.
CREATE INDEX knowledge_documents_by_agent ON knowledge_documents (org_id, agent, created_at, id);

CREATE TABLE knowledge_chunks (
    org_id      text COLLATE "C" NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    seq         integer NOT NULL CHECK (seq >= 0),
    agent       text COLLATE "C" NOT NULL,
    -- store.MaxKnowledgeChunkRunes (2,000): the store refuses a longer
    -- chunk itself; this is the backstop.
    text        text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 2000),
    model       text COLLATE "C" NOT NULL DEFAULT '' CHECK (octet_length(model) <= 255),
    vector      bytea NOT NULL DEFAULT '\x' CHECK (octet_length(vector) <= 8197),
    PRIMARY KEY (org_id, document_id, seq)
);

-- KnowledgeVectors and StaleKnowledgeChunks (an agent's rows of one
-- model), and the per-agent chunk count.
CREATE INDEX knowledge_chunks_by_agent ON knowledge_chunks (org_id, agent, model);

-- What SearchKnowledge matches: each chunk's store.MemoryTerms as a
-- tsvector, as memory_search (0011). Written when a document turns
-- ready, so only ready documents are found; derived from
-- knowledge_chunks (an import rebuilds it).
CREATE TABLE knowledge_search (
    org_id      text COLLATE "C" NOT NULL,
    document_id text COLLATE "C" NOT NULL,
    seq         integer NOT NULL,
    agent       text COLLATE "C" NOT NULL,
    terms       tsvector NOT NULL,
    PRIMARY KEY (org_id, document_id, seq)
);

CREATE INDEX knowledge_search_terms ON knowledge_search USING gin (terms);
