-- 0013: rate buckets, the HTTP API's per-user token buckets, kept in the
-- store so that every process over it counts one bucket per key.
-- Ephemeral: exports leave them out, and a deleted bucket starts full.

-- A bucket's tokens (fractional, up to its burst) as of touched_at, its
-- last spend; the arithmetic is store.RateBucket.Take.
CREATE TABLE rate_buckets (
    key        TEXT NOT NULL PRIMARY KEY,
    tokens     REAL NOT NULL CHECK (tokens >= 0),
    touched_at TEXT NOT NULL
);

-- DeleteRateBucketsBefore: the buckets idle long enough to be full.
CREATE INDEX rate_buckets_by_touched ON rate_buckets (touched_at);
