-- 0001: the whole schema, as store/sqlite's migrations 0001..0009 leave
-- it, in PostgreSQL's terms. A released migration is never edited; a
-- change is a new file, here and in store/sqlite in the same change.
--
-- Conventions:
--   * Every table of an organisation's records leads its key with org_id,
--     so that every lookup is scoped to one organisation by its key.
--   * Instants are timestamptz; NULL where the record says "not yet" (a
--     turn's ended_at, a credential that never expires).
--   * Keys, names and anything listed in order are text COLLATE "C": ORDER
--     BY is then byte order, as in SQLite, whatever the database's locale,
--     and the primary keys' indexes serve those orders.
--   * Text that models, tools or people write unchecked (message content,
--     result bodies) is bytea: PostgreSQL text refuses NUL and invalid
--     UTF-8, which a Go string may hold. Documents stored byte for byte
--     (settings, agent definitions) are bytea too.
--   * CHECKs repeat rules the store checks itself; they are the backstop
--     should a write ever skip the check.

-- Conversations -------------------------------------------------------

CREATE TABLE conversations (
    org_id     text COLLATE "C" NOT NULL,
    id         text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL,
    agent      text NOT NULL,
    title      text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- ListConversations: one user's conversations, most recently updated
-- first, then by ID.
CREATE INDEX conversations_by_user
    ON conversations (org_id, user_id, updated_at DESC, id);

-- Turns ---------------------------------------------------------------

CREATE TABLE turns (
    org_id          text COLLATE "C" NOT NULL,
    id              text COLLATE "C" NOT NULL,
    user_id         text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    agent           text NOT NULL,
    model           text NOT NULL,
    timezone        text NOT NULL,
    payer           text COLLATE "C" NOT NULL,
    -- The frozen toolset, in declaration order.
    tools           text[] NOT NULL,
    -- JSON arrays of {"name", "reason"}, in order: why each catalog tool
    -- was left out, and why each declared tool was declared by a gate.
    -- NULL: not recorded (no gate, for declarations); '[]': none.
    exclusions      json,
    declarations    json,
    -- How many tools selection gave before a gate narrowed them; 0 when
    -- not recorded.
    selected        integer NOT NULL DEFAULT 0,
    status          text NOT NULL,
    question        text NOT NULL,
    suggested       text NOT NULL,
    steps           integer NOT NULL,
    started_at      timestamptz NOT NULL,
    ended_at        timestamptz,
    PRIMARY KEY (org_id, id)
);

-- InterruptTurns: the running turns, in every organisation, by start.
CREATE INDEX turns_running ON turns (started_at) WHERE status = 'running';

-- Messages ------------------------------------------------------------

-- The last Seq handed out per conversation. AppendMessage increments the
-- row in the transaction that inserts the message, so appends to one
-- conversation queue on the row's lock and commit in Seq order: a reader
-- never sees Seq n+1 before Seq n. A conversation's counter exists from
-- its first message on; messages may name a conversation that has no
-- conversations row (the store does not require one).
CREATE TABLE message_counters (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    last_seq        bigint NOT NULL CHECK (last_seq > 0),
    PRIMARY KEY (org_id, conversation_id)
);

CREATE TABLE messages (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    seq             bigint NOT NULL CHECK (seq > 0),
    turn_id         text COLLATE "C" NOT NULL,
    role            text NOT NULL,
    content         bytea NOT NULL,
    tool_name       text NOT NULL,
    tool_call_id    text NOT NULL,
    ref             text COLLATE "C" NOT NULL DEFAULT '',
    is_error        boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL,
    -- ListMessages: a prefix of the key, in Seq order.
    PRIMARY KEY (org_id, conversation_id, seq)
);

-- Results -------------------------------------------------------------

-- A ref is unique across organisations: refs are minted by Quiver, and a
-- reused one is a bug to report, not a second record to keep.
CREATE TABLE results (
    ref             text COLLATE "C" NOT NULL PRIMARY KEY,
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    turn_id         text COLLATE "C" NOT NULL,
    tool            text NOT NULL,
    body            bytea NOT NULL,
    created_at      timestamptz NOT NULL
);

-- Usage ---------------------------------------------------------------

-- One row per model call. id only keeps insertion order for records that
-- share a step; nothing outside the store sees it.
CREATE TABLE usage (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id              text COLLATE "C" NOT NULL,
    conversation_id     text COLLATE "C" NOT NULL,
    turn_id             text COLLATE "C" NOT NULL,
    payer               text COLLATE "C" NOT NULL,
    model               text NOT NULL,
    step                integer NOT NULL,
    input_tokens        bigint NOT NULL,
    cached_input_tokens bigint NOT NULL,
    cache_write_tokens  bigint NOT NULL,
    output_tokens       bigint NOT NULL,
    cost_micros         bigint NOT NULL,
    created_at          timestamptz NOT NULL
);

-- SumUsage: a payer's records in a time window.
CREATE INDEX usage_by_payer ON usage (org_id, payer, created_at);
-- ListUsage: a turn's records, by step.
CREATE INDEX usage_by_turn ON usage (org_id, turn_id, step, id);

-- MCP servers ---------------------------------------------------------

-- token is the sealed token ('' when none); the store never sees a
-- plaintext one. tools is NULL until a discovery succeeds, then the tool
-- names in order, possibly none: NULL and '{}' mean different things
-- ("unknown" and "none"). discovered_at is NULL when tools is.
CREATE TABLE mcp_servers (
    org_id        text COLLATE "C" NOT NULL,
    id            text COLLATE "C" NOT NULL,
    name          text COLLATE "C" NOT NULL,
    url           text NOT NULL,
    token         text NOT NULL DEFAULT '',
    type          text NOT NULL,
    enabled       boolean NOT NULL,
    tools         text[],
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    discovered_at timestamptz,
    PRIMARY KEY (org_id, id),
    -- GetMCPServer, and ListMCPServers by name.
    CONSTRAINT mcp_servers_name_key UNIQUE (org_id, name)
);

-- One enabled server per typed family in an organisation. The store
-- checks the rule itself, to return ErrFamilyInUse; this index is the
-- backstop (and, under concurrency, the referee).
CREATE UNIQUE INDEX mcp_servers_one_enabled_per_type
    ON mcp_servers (org_id, type) WHERE enabled AND type <> 'general';

-- CountMCPTokens and RewrapMCPTokens: only the rows holding a token.
CREATE INDEX mcp_servers_with_token
    ON mcp_servers (org_id, id) WHERE token <> '';

-- Deliberate Tool Mode ------------------------------------------------

-- A community's settings; no row: disabled, history_turns -1 ("not set"),
-- always-on helpers not gated.
CREATE TABLE intent_settings (
    org_id         text COLLATE "C" NOT NULL PRIMARY KEY,
    enabled        boolean NOT NULL,
    history_turns  integer NOT NULL CHECK (history_turns BETWEEN -1 AND 10),
    gate_always_on boolean NOT NULL DEFAULT false,
    updated_at     timestamptz NOT NULL
);

-- ListIntentTriggers, by target then phrase (byte order), and a target's
-- count for AddIntentTrigger's limit: both are prefixes of the key.
CREATE TABLE intent_triggers (
    org_id     text COLLATE "C" NOT NULL,
    target     text COLLATE "C" NOT NULL CHECK (target <> ''),
    phrase     text COLLATE "C" NOT NULL CHECK (phrase <> ''),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, target, phrase)
);

-- Users' overrides; no row: 'follow'.
CREATE TABLE intent_user_modes (
    org_id  text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    mode    text NOT NULL CHECK (mode IN ('off', 'follow', 'on')),
    PRIMARY KEY (org_id, user_id)
);

-- The targets each conversation opened, one row per target, position
-- numbering them from 0 in the order they first opened. The key holds a
-- target once per conversation; the unique position keeps the open order
-- total should a write ever skip the store's numbering.
CREATE TABLE conversation_intent_targets (
    org_id          text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    target          text COLLATE "C" NOT NULL CHECK (target <> ''),
    position        integer NOT NULL CHECK (position >= 0),
    PRIMARY KEY (org_id, conversation_id, target),
    -- OpenIntentTargets: a conversation's targets in open order.
    CONSTRAINT conversation_intent_targets_position_key
        UNIQUE (org_id, conversation_id, position)
);

-- Accounts ------------------------------------------------------------

CREATE TABLE orgs (
    id         text COLLATE "C" NOT NULL PRIMARY KEY CHECK (id <> ''),
    name       text NOT NULL,
    created_at timestamptz NOT NULL
);

-- ListUsers, by ID: a prefix of the key. disabled_at is NULL for an
-- active user.
CREATE TABLE users (
    org_id       text COLLATE "C" NOT NULL,
    id           text COLLATE "C" NOT NULL CHECK (id <> ''),
    display_name text NOT NULL,
    department   text NOT NULL,
    timezone     text NOT NULL,
    role         text NOT NULL CHECK (role IN ('admin', 'member')),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    disabled_at  timestamptz,
    PRIMARY KEY (org_id, id),
    CONSTRAINT users_org_id_fkey FOREIGN KEY (org_id) REFERENCES orgs (id)
);

-- The last-admin rule: the enabled admins of an organisation.
CREATE INDEX users_enabled_admins ON users (org_id)
    WHERE role = 'admin' AND disabled_at IS NULL;

-- A credential is stored as the lower-case hex SHA-256 of its secret,
-- never the secret; expires_at is NULL for one that never expires.
-- LookupCredential and ConsumeCredential find a credential by its kind
-- and hash alone: the hash of a random secret names one credential in
-- every organisation.
CREATE TABLE credentials (
    kind       text COLLATE "C" NOT NULL
        CHECK (kind IN ('api_token', 'session', 'login_link')),
    hash       text COLLATE "C" NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
    org_id     text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL,
    label      text NOT NULL,
    csrf       text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (kind, hash)
);

-- ListCredentials: one user's credentials of one kind, newest first.
CREATE INDEX credentials_by_user
    ON credentials (org_id, user_id, kind, created_at DESC);
-- DeleteExpiredCredentials.
CREATE INDEX credentials_by_expiry ON credentials (expires_at)
    WHERE expires_at IS NOT NULL;

-- Agents --------------------------------------------------------------

-- ListAgents, by name: a prefix of the key. definition is the YAML as
-- authored, byte for byte.
CREATE TABLE agents (
    org_id     text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL CHECK (name <> ''),
    definition bytea NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, name)
);

-- Settings ------------------------------------------------------------

-- An organisation's settings document, as the caller shaped it, byte for
-- byte (no row: never saved, version 0). version counts saves (and key
-- rotations that re-sealed the organisation's secrets), for
-- PutOrgSettings' optimistic check.
CREATE TABLE org_settings (
    org_id     text COLLATE "C" NOT NULL PRIMARY KEY,
    doc        bytea NOT NULL,
    version    bigint NOT NULL CHECK (version > 0),
    updated_at timestamptz NOT NULL,
    CONSTRAINT org_settings_org_id_fkey FOREIGN KEY (org_id) REFERENCES orgs (id)
);

-- Sealed secrets, one row per name, apart from the document so that key
-- rotation re-encrypts them without reading it. sealed is
-- secret.Keyring.Seal output; the store never sees a plaintext secret. A
-- secret belongs to saved settings.
CREATE TABLE org_secrets (
    org_id text COLLATE "C" NOT NULL,
    name   text COLLATE "C" NOT NULL CHECK (name <> ''),
    sealed text NOT NULL CHECK (sealed <> ''),
    PRIMARY KEY (org_id, name),
    CONSTRAINT org_secrets_org_id_fkey FOREIGN KEY (org_id) REFERENCES org_settings (org_id)
);
