-- 0029: scheduled tasks (store.Tasks): what people scheduled their agent
-- to do, and the lease each due run is claimed under, so that several
-- schedulers (or one, restarted) run each due run once at a time.
--
-- Times are store/sqlite's fixed-width UTC text, which sorts as the
-- instants do; a NULL next_run_at is a task that is not due (done).

CREATE TABLE scheduled_tasks (
    org_id          TEXT NOT NULL,
    id              TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    agent           TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    channel_id      TEXT NOT NULL,
    title           TEXT NOT NULL CHECK (length(title) <= 120),
    instruction     TEXT NOT NULL CHECK (length(instruction) BETWEEN 1 AND 4000),
    kind            TEXT NOT NULL CHECK (kind IN ('once', 'cron', 'interval')),
    spec            TEXT NOT NULL,
    every_seconds   INTEGER NOT NULL,
    timezone        TEXT NOT NULL,
    tools           TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('active', 'paused', 'done')),
    next_run_at     TEXT,
    -- When a claim may take the task: the later of next_run_at and
    -- lease_until, kept by every write, so the claim reads one index
    -- range and never steps over the leased rows of a large due batch.
    claimable_at    TEXT,
    version         INTEGER NOT NULL,
    lease_owner     TEXT NOT NULL,
    lease_until     TEXT,
    attempts        INTEGER NOT NULL,
    runs            INTEGER NOT NULL,
    last_due_at     TEXT,
    last_run_at     TEXT,
    last_status     TEXT NOT NULL,
    last_error      TEXT NOT NULL,
    last_turn_id    TEXT NOT NULL,
    last_late_ms    INTEGER NOT NULL,
    created_turn_id TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- The schedulers' claim: active tasks by when they may be taken.
CREATE INDEX scheduled_tasks_claimable ON scheduled_tasks (claimable_at) WHERE state = 'active';
-- A person's list and the per-person count; a conversation's delete.
CREATE INDEX scheduled_tasks_by_user ON scheduled_tasks (org_id, user_id);
CREATE INDEX scheduled_tasks_by_conversation ON scheduled_tasks (org_id, conversation_id);
