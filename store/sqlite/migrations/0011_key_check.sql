-- 0011: values that belong to the whole deployment rather than to an
-- organisation, one row per name. The first is 'keyring_check', the
-- deployment's keyring check (store.KeyChecks): a value sealed with the
-- keyring, which every process opening the database must be able to
-- open. A value is never empty: no row means none is stored.

CREATE TABLE deployment (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL CHECK (value <> '')
);
