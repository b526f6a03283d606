-- 0022: named leases (store.Leases), as store/sqlite's 0031: one replica
-- at a time holds each (the Discord gateway connection), until
-- expires_at, which is the replicas' clock written as a parameter, never
-- now().

CREATE TABLE leases (
    name       text COLLATE "C" NOT NULL PRIMARY KEY,
    holder     text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL
);
