-- 0026: memory search reads only the searcher's memories from the
-- full-text index. memory_search gains an indexed column, scope: one
-- token per owner ('s', the organisation's id in hex, 'x', the owner's
-- id in hex; memorySearchScope writes the same), so that a search ANDs
-- the owner's and the shared memories' scopes with its words and FTS5
-- walks only their rows, instead of scoring every memory of the
-- organisation that holds a word and filtering afterwards. Rows keep
-- their rowid (memory_search_rows names them).
CREATE VIRTUAL TABLE memory_search_scoped USING fts5(
    terms,
    scope,
    org_id UNINDEXED,
    owner_id UNINDEXED,
    memory_id UNINDEXED,
    tokenize = 'ascii'
);

INSERT INTO memory_search_scoped (rowid, terms, scope, org_id, owner_id, memory_id)
    SELECT rowid, terms, 's' || lower(hex(org_id)) || 'x' || lower(hex(owner_id)), org_id, owner_id, memory_id
    FROM memory_search;

DROP TABLE memory_search;
ALTER TABLE memory_search_scoped RENAME TO memory_search;
