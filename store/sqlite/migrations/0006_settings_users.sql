-- 0006: organisation settings, and disabled users. An organisation's
-- settings are a document the caller shapes (no row: never saved, version
-- 0) and its sealed secrets, one row per name, kept apart from the
-- document so that key rotation re-encrypts them without reading it. A
-- secret belongs to saved settings: its organisation has a settings row.
-- version counts saves, for PutOrgSettings' optimistic check.

CREATE TABLE org_settings (
    org_id     TEXT NOT NULL PRIMARY KEY REFERENCES orgs (id),
    doc        BLOB NOT NULL,
    version    INTEGER NOT NULL CHECK (version > 0),
    updated_at TEXT NOT NULL
);

-- GetOrgSettings, by name: a prefix of the primary key. sealed is
-- secret.Keyring.Seal output; the store never sees a plaintext secret.
CREATE TABLE org_secrets (
    org_id TEXT NOT NULL REFERENCES org_settings (org_id),
    name   TEXT NOT NULL CHECK (name <> ''),
    sealed TEXT NOT NULL CHECK (sealed <> ''),
    PRIMARY KEY (org_id, name)
);

-- NULL for an active user (a zero DisabledAt), so rows written under 0005
-- read back active.
ALTER TABLE users ADD COLUMN disabled_at TEXT;
