-- 0003: remote MCP servers that users register, one row per server.
-- token is the sealed token ('' when none); the store never sees a
-- plaintext one. tools is NULL until a discovery succeeds, then a JSON
-- array of tool names in order, possibly empty: NULL and '[]' mean
-- different things ("unknown" and "none"). discovered_at is NULL when
-- tools is.

CREATE TABLE mcp_servers (
    org_id        TEXT NOT NULL,
    id            TEXT NOT NULL,
    name          TEXT NOT NULL,
    url           TEXT NOT NULL,
    token         TEXT NOT NULL DEFAULT '',
    type          TEXT NOT NULL,
    enabled       INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    tools         TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    discovered_at TEXT,
    PRIMARY KEY (org_id, id),
    -- GetMCPServer, and ListMCPServers by name.
    UNIQUE (org_id, name)
);

-- One enabled server per typed family in an organisation. The store checks
-- the rule itself, to return ErrFamilyInUse; this index is the backstop
-- should a write ever skip the check.
CREATE UNIQUE INDEX mcp_servers_one_enabled_per_type
    ON mcp_servers (org_id, type) WHERE enabled AND type <> 'general';

-- CountMCPTokens and RewrapMCPTokens: only the rows holding a token.
CREATE INDEX mcp_servers_with_token
    ON mcp_servers (org_id, id) WHERE token <> '';
