-- The stored results quota (store.ResultQuota): whose quota each body
-- counts against, its size in bytes (so that sums never read bodies), and
-- when the quota evicted it (the row stays, bodiless, so that
-- read_tool_result can say the result was evicted).
ALTER TABLE results ADD COLUMN user_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN size bigint NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN evicted_at timestamptz;

UPDATE results r SET
    size = octet_length(r.body),
    user_id = COALESCE((SELECT c.user_id FROM conversations c
        WHERE c.org_id = r.org_id AND c.id = r.conversation_id), '');

-- Covering, over the bodies still held: a put sums and orders these
-- without touching a body.
CREATE INDEX results_conversation_held ON results (org_id, conversation_id, created_at, ref) INCLUDE (size)
    WHERE evicted_at IS NULL;
CREATE INDEX results_user_held ON results (org_id, user_id, created_at, ref) INCLUDE (size)
    WHERE evicted_at IS NULL;
