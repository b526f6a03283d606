-- 0003: values that belong to the whole deployment rather than to an
-- organisation, one row per name; as store/sqlite's 0011. The first is
-- 'keyring_check', the deployment's keyring check (store.KeyChecks): a
-- value sealed with the keyring, which every replica must be able to
-- open before it starts. A value is never empty: no row means none is
-- stored.

CREATE TABLE deployment (
    name  text COLLATE "C" PRIMARY KEY,
    value text NOT NULL CHECK (value <> '')
);
