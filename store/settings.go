package store

import (
	"context"
	"time"
)

// OrgSettings are an organisation's settings as stored: a document whose
// shape belongs to the caller, and sealed secrets (API keys) kept apart so
// that key rotation can re-encrypt them without reading the document.
type OrgSettings struct {
	OrgID string
	// Doc is the settings document (JSON); nil when never saved.
	Doc []byte
	// Secrets are sealed values by name (secret.Keyring.Seal output bound
	// to the organisation and the name). Stores never see plaintext.
	Secrets map[string]string
	// Version counts saves, and key rotations that re-sealed the
	// organisation's secrets; 0 means never saved.
	Version   int64
	UpdatedAt time.Time
}

// Settings stores organisations' settings.
type Settings interface {
	// GetOrgSettings returns the organisation's settings; one that never
	// saved any gets {OrgID, Version: 0, Secrets: empty non-nil map} and
	// no error.
	GetOrgSettings(ctx context.Context, orgID string) (OrgSettings, error)
	// PutOrgSettings replaces the document and the whole set of secrets
	// (names absent from s.Secrets are deleted) when the stored version is
	// s.Version, storing version s.Version+1 and UpdatedAt = s.UpdatedAt,
	// in one transaction, and returns the new version. Another stored
	// version gives ErrConflict, writing nothing.
	PutOrgSettings(ctx context.Context, s OrgSettings) (int64, error)
	// CountOrgSecrets returns how many sealed secrets are stored, in every
	// organisation.
	CountOrgSecrets(ctx context.Context) (int, error)
	// RewrapOrgSecrets calls rewrap for every stored secret, in every
	// organisation, and stores what it returns when it differs, all in one
	// transaction: when rewrap fails for any secret nothing is written and
	// its error is returned. It returns how many changed. The version of
	// every organisation with a changed secret is bumped in the same
	// transaction (UpdatedAt is left alone), so a PutOrgSettings based on
	// a read from before the rotation, which would store secrets sealed
	// under the old key, gets ErrConflict.
	RewrapOrgSecrets(ctx context.Context, rewrap func(orgID, name, sealed string) (string, error)) (int, error)
}
