-- 0005: accounts and agents. Organisations, their users, the credentials
-- that authenticate users, and the agent definitions an organisation saved.
-- A credential is stored as the lower-case hex SHA-256 of its secret, never
-- the secret; expires_at is NULL for one that never expires. Roles and
-- kinds repeat the store package's constants: the store checks them, these
-- CHECKs are the backstop should a write ever skip it.

CREATE TABLE orgs (
    id         TEXT NOT NULL PRIMARY KEY CHECK (id <> ''),
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- ListUsers, by ID: a prefix of the primary key.
CREATE TABLE users (
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    id           TEXT NOT NULL CHECK (id <> ''),
    display_name TEXT NOT NULL,
    department   TEXT NOT NULL,
    timezone     TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- LookupCredential and ConsumeCredential find a credential by its kind
-- and hash alone: the hash of a random secret names one credential in
-- every organisation.
CREATE TABLE credentials (
    kind       TEXT NOT NULL CHECK (kind IN ('api_token', 'session', 'login_link')),
    hash       TEXT NOT NULL
        CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
    org_id     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    label      TEXT NOT NULL,
    csrf       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    PRIMARY KEY (kind, hash)
);

-- ListCredentials: one user's credentials of one kind.
CREATE INDEX credentials_by_user ON credentials (org_id, user_id, kind);
-- DeleteExpiredCredentials.
CREATE INDEX credentials_by_expiry ON credentials (expires_at);

-- ListAgents, by name: a prefix of the primary key.
CREATE TABLE agents (
    org_id     TEXT NOT NULL,
    name       TEXT NOT NULL CHECK (name <> ''),
    definition BLOB NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (org_id, name)
);
