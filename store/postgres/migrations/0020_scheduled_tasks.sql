-- 0020: scheduled tasks (store.Tasks), as store/sqlite's 0029: what
-- people scheduled their agent to do, and the lease each due run is
-- claimed under (FOR UPDATE SKIP LOCKED), so that the schedulers of
-- several replicas run each due run once at a time. Every time is the
-- schedulers' injected clock, written as a parameter: nothing here reads
-- now(). A NULL next_run_at is a task that is not due (done).

CREATE TABLE scheduled_tasks (
    org_id          text COLLATE "C" NOT NULL,
    id              text COLLATE "C" NOT NULL,
    user_id         text COLLATE "C" NOT NULL,
    agent           text COLLATE "C" NOT NULL,
    conversation_id text COLLATE "C" NOT NULL,
    channel_id      text COLLATE "C" NOT NULL,
    title           text NOT NULL CHECK (char_length(title) <= 120),
    instruction     text NOT NULL CHECK (char_length(instruction) BETWEEN 1 AND 4000),
    kind            text NOT NULL CHECK (kind IN ('once', 'cron', 'interval')),
    spec            text NOT NULL,
    every_seconds   bigint NOT NULL,
    timezone        text NOT NULL,
    tools           text[] NOT NULL,
    state           text NOT NULL CHECK (state IN ('active', 'paused', 'done')),
    next_run_at     timestamptz,
    -- When a claim may take the task: the later of next_run_at and
    -- lease_until, kept by every write, so the claim reads one index
    -- range and never steps over the leased rows of a large due batch.
    claimable_at    timestamptz,
    version         bigint NOT NULL,
    lease_owner     text COLLATE "C" NOT NULL,
    lease_until     timestamptz,
    attempts        integer NOT NULL,
    runs            bigint NOT NULL,
    last_due_at     timestamptz,
    last_run_at     timestamptz,
    last_status     text NOT NULL,
    last_error      text NOT NULL,
    last_turn_id    text COLLATE "C" NOT NULL,
    last_late_ms    bigint NOT NULL,
    created_turn_id text COLLATE "C" NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- The schedulers' claim: active tasks by when they may be taken.
CREATE INDEX scheduled_tasks_claimable ON scheduled_tasks (claimable_at) WHERE state = 'active';
-- A person's list and the per-person count; a conversation's delete.
CREATE INDEX scheduled_tasks_by_user ON scheduled_tasks (org_id, user_id);
CREATE INDEX scheduled_tasks_by_conversation ON scheduled_tasks (org_id, conversation_id);
