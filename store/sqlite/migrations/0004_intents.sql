-- 0004: Deliberate Tool Mode. A community's settings (no row: disabled,
-- history_turns -1, "not set"), its custom triggers, its users' overrides
-- (no row: 'follow'), and the targets each conversation opened, one row
-- per target, position numbering them from 0 in the order they first
-- opened. Triggers and targets are stored as the intent package normalised
-- them; the store compares them byte by byte.

CREATE TABLE intent_settings (
    org_id        TEXT NOT NULL PRIMARY KEY,
    enabled       INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    history_turns INTEGER NOT NULL CHECK (history_turns BETWEEN -1 AND 10),
    updated_at    TEXT NOT NULL
);

-- ListIntentTriggers, by target then phrase, and a target's count for
-- AddIntentTrigger's limit: both are prefixes of the primary key.
CREATE TABLE intent_triggers (
    org_id     TEXT NOT NULL,
    target     TEXT NOT NULL CHECK (target <> ''),
    phrase     TEXT NOT NULL CHECK (phrase <> ''),
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, target, phrase)
);

CREATE TABLE intent_user_modes (
    org_id  TEXT NOT NULL,
    user_id TEXT NOT NULL,
    mode    TEXT NOT NULL CHECK (mode IN ('off', 'follow', 'on')),
    PRIMARY KEY (org_id, user_id)
);

-- The primary key holds a target once per conversation; the unique
-- position keeps the open order total should a write ever skip the
-- store's numbering.
CREATE TABLE conversation_intent_targets (
    org_id          TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    target          TEXT NOT NULL CHECK (target <> ''),
    position        INTEGER NOT NULL CHECK (position >= 0),
    PRIMARY KEY (org_id, conversation_id, target),
    -- OpenIntentTargets: a conversation's targets in open order.
    UNIQUE (org_id, conversation_id, position)
);
