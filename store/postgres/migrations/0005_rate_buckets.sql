-- 0005: rate buckets, the HTTP API's per-user token buckets, shared by
-- every replica (store/sqlite's 0013 in PostgreSQL's terms). Ephemeral:
-- exports leave them out, and a deleted bucket starts full.

-- A bucket's tokens (fractional, up to its burst) as of touched_at, its
-- last spend; the arithmetic is store.RateBucket.Take. The row's lock is
-- what concurrent takers of one key queue on.
CREATE TABLE rate_buckets (
    key        text COLLATE "C" NOT NULL PRIMARY KEY,
    tokens     double precision NOT NULL CHECK (tokens >= 0),
    touched_at timestamptz NOT NULL
);

-- DeleteRateBucketsBefore: the buckets idle long enough to be full.
CREATE INDEX rate_buckets_by_touched ON rate_buckets (touched_at);
