-- 0031: named leases (store.Leases): one holder at a time for work one
-- process may do (the Discord gateway connection), until expires_at (the
-- caller's clock).

CREATE TABLE leases (
    name       TEXT NOT NULL PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
