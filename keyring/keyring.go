// Package keyring holds a deployment's keyring to its database: every
// process that opens the store with a keyring (each quiver serve replica,
// each command) must hold the keyring the deployment's secrets are sealed
// under, and one that does not is refused at start (Check), before it
// writes anything, rather than failing later on a secret it cannot open.
// The database keeps one value sealed with the keyring (store.KeyChecks);
// rotation re-seals it (RotateCheck).
package keyring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
)

// The keyring check. Every process that opens a store with a keyring —
// each `quiver serve` replica and each command — must hold the keyring
// the deployment's secrets are sealed under; a replica handed another
// one would seal secrets its peers cannot open, or fail when it first
// meets one of theirs. So the database keeps one value sealed with the
// keyring (store.KeyChecks): the first process to open it with a keyring
// stores it, and every later one must open it before it starts, or is
// refused. Rotation re-seals it under the new primary key with the other
// secrets.
//
// This is its own package rather than part of package secret: secret is
// the cipher and knows no store, while the check reads the store and the
// sealed values of the packages that own them (mcpclient, settings).

// Key check constants: the sealed plaintext and the additional data that
// binds it to its row (the deployment table's keyring_check), so that no
// other sealed value in the database (an MCP token, a settings key) can
// pass for it. Changing either would refuse every deployment.
const (
	keyCheckPlaintext = "quiver keyring check v1"
	keyCheckAAD       = "deployment/keyring_check"
)

// keyringDoc is where the refusals send the operator.
const keyringDoc = `docs/postgres.md, "Secrets with several replicas"`

// keyringError is the refusal to start over the database's keyring: the
// configured keys cannot open what it holds, or no key is configured
// over a database that has a keyring check. It names key ids only, never
// key material.
type keyringError struct {
	// sealedID is the key id the database's value names ("unknown" when
	// it names none).
	sealedID string
	// configured are the configured key ids, sorted; nil when no key is
	// configured.
	configured []string
}

// Error is the one message the operator reads: what is wrong, what every
// process needs, and where to read more.
func (e *keyringError) Error() string {
	const need = "every replica and command needs the same keyring (secrets.key_file or secrets.keys_env, see " + keyringDoc + "); refusing to start"
	if e.configured == nil {
		return fmt.Sprintf("this database's secrets were sealed with a keyring (key %s) but no encryption key is configured; %s", e.sealedID, need)
	}
	under := "key " + e.sealedID
	if slices.Contains(e.configured, e.sealedID) {
		under = "a different key with the id " + e.sealedID
	}
	return fmt.Sprintf("the configured keys (%s) cannot open this database's secrets (sealed under %s); %s",
		strings.Join(e.configured, ", "), under, need)
}

// keyringRefusal is the refusal over sealed, the value that did not open
// (or, kr nil, that needs a keyring).
func keyringRefusal(sealed string, kr *secret.Keyring) *keyringError {
	id, err := secret.SealedKeyID(sealed)
	if err != nil {
		id = "unknown"
	}
	e := &keyringError{sealedID: id}
	if kr != nil {
		e.configured = kr.IDs()
	}
	return e
}

// Store is what the start-up check reads and writes.
type Store interface {
	store.KeyChecks
	sealedCounter
	mcpclient.TokenRewrapper
	settings.KeyRewrapper
}

// Check refuses to go on with a keyring other than the database's,
// so that a process with the wrong keys stops at start and writes
// nothing. Without a keyring (kr nil) it refuses a store holding sealed
// secrets (checkTokens: ErrNoKey) or a keyring check. With one, it opens the stored
// check, or stores the first one (firstKeyCheck).
func Check(ctx context.Context, st Store, kr *secret.Keyring) error {
	sealed, err := st.KeyCheck(ctx)
	if err != nil {
		return fmt.Errorf("read the keyring check: %w", err)
	}
	if kr == nil {
		if err := checkTokens(ctx, st, nil); err != nil {
			return err
		}
		if sealed != "" {
			return keyringRefusal(sealed, nil)
		}
		return nil
	}
	if sealed == "" {
		return firstKeyCheck(ctx, st, kr)
	}
	return openKeyCheck(kr, sealed)
}

// CheckSealed refuses kr unless it opens sealed, a keyring check value
// read from elsewhere than the open store (an archive being imported,
// whose sealed secrets are copied as they are), with the refusal Check
// gives: kr nil, or without the check's key, is refused. "" (no check)
// passes.
func CheckSealed(kr *secret.Keyring, sealed string) error {
	switch {
	case sealed == "":
		return nil
	case kr == nil:
		return keyringRefusal(sealed, nil)
	}
	return openKeyCheck(kr, sealed)
}

// firstKeyCheck stores the first keyring check, sealed under kr's primary
// key, once kr has shown it opens the secrets the store already holds (a
// deployment from before the check; see openStoredSecrets): a first
// check sealed under the wrong keys would lock out the right ones. When
// another process stored one meanwhile, that one must open instead.
func firstKeyCheck(ctx context.Context, st Store, kr *secret.Keyring) error {
	if err := openStoredSecrets(ctx, st, kr); err != nil {
		return err
	}
	sealed, err := kr.Seal([]byte(keyCheckPlaintext), []byte(keyCheckAAD))
	if err != nil {
		return fmt.Errorf("seal the keyring check: %w", err)
	}
	err = st.SetKeyCheck(ctx, "", sealed)
	if !errors.Is(err, store.ErrConflict) {
		if err != nil {
			return fmt.Errorf("store the keyring check: %w", err)
		}
		return nil
	}
	theirs, err := st.KeyCheck(ctx)
	if err != nil {
		return fmt.Errorf("read the keyring check: %w", err)
	}
	if theirs == "" {
		return errors.New("store the keyring check: removed while it was being stored; run again")
	}
	return openKeyCheck(kr, theirs)
}

// openKeyCheck opens the stored keyring check with kr: nil when it opens
// to the check's plaintext, the refusal when kr lacks its key or holds
// another key under its id, an error when the stored value is damaged.
func openKeyCheck(kr *secret.Keyring, sealed string) error {
	pt, err := kr.Open(sealed, []byte(keyCheckAAD))
	switch {
	case errors.Is(err, secret.ErrUnknownKey), errors.Is(err, secret.ErrDecrypt):
		return keyringRefusal(sealed, kr)
	case err != nil:
		return fmt.Errorf("the keyring check stored in this database is damaged (%w); refusing to start", err)
	case string(pt) != keyCheckPlaintext:
		return errors.New("the keyring check stored in this database holds an unexpected value; refusing to start")
	}
	return nil
}

// openStoredSecrets tries kr on every sealed MCP token and settings key
// the store holds, and refuses kr when there are some and it opens none:
// those keys are not the deployment's. One that opens while others do
// not is a deployment with stale values (sealed under a key since
// dropped, or damaged), which the right keyring cannot mend either, so
// it passes. It writes nothing: each rewrap answers the value it was
// given.
func openStoredSecrets(ctx context.Context, st Store, kr *secret.Keyring) error {
	var opened int
	var refused string // a value sealed under a key kr lacks, or another key under its id
	try := func(sealed string, aad []byte) (string, error) {
		pt, err := kr.Open(sealed, aad)
		switch {
		case err == nil:
			clear(pt)
			opened++
		case errors.Is(err, secret.ErrUnknownKey), errors.Is(err, secret.ErrDecrypt):
			refused = sealed
		}
		return sealed, nil
	}
	_, err := st.RewrapMCPTokens(ctx, func(s store.MCPServer) (string, error) {
		return try(s.Token, mcpclient.TokenAAD(s.OrgID, s.ID))
	})
	if err == nil {
		_, err = st.RewrapOrgSecrets(ctx, func(orgID, name, sealed string) (string, error) {
			return try(sealed, settings.SecretAAD(orgID, name))
		})
	}
	switch {
	case err != nil:
		return fmt.Errorf("read the stored secrets: %w", err)
	case opened == 0 && refused != "":
		return keyringRefusal(refused, kr)
	}
	return nil
}

// RotateCheck re-seals the stored keyring check under kr's primary key
// (`quiver secrets rotate`, after the other secrets), so that a process
// holding only the new key opens it. A check already under the primary
// key is left alone; none stored gets a first one. Another process
// changing it meanwhile gives an error wrapping store.ErrConflict.
func RotateCheck(ctx context.Context, st store.KeyChecks, kr *secret.Keyring) error {
	old, err := st.KeyCheck(ctx)
	if err != nil {
		return err
	}
	var sealed string
	if old == "" {
		sealed, err = kr.Seal([]byte(keyCheckPlaintext), []byte(keyCheckAAD))
	} else if err = openKeyCheck(kr, old); err == nil {
		sealed, err = kr.Rotate(old, []byte(keyCheckAAD))
	}
	if err != nil || sealed == old {
		return err
	}
	return st.SetKeyCheck(ctx, old, sealed)
}

// ErrNoKey is the refusal to start with sealed secrets stored and no key.
var ErrNoKey = errors.New("stored secrets (MCP auth tokens or settings keys) exist but no encryption key is configured (set secrets.key_file or secrets.keys_env in the config); refusing to start")

// sealedCounter counts the secrets a store holds sealed with the keyring.
type sealedCounter interface {
	CountMCPTokens(ctx context.Context) (int, error)
	CountOrgSecrets(ctx context.Context) (int, error)
}

// checkTokens refuses a store holding sealed secrets (MCP tokens,
// settings keys) when there is no keyring.
func checkTokens(ctx context.Context, st sealedCounter, kr *secret.Keyring) error {
	if kr != nil {
		return nil
	}
	n, err := st.CountMCPTokens(ctx)
	if err != nil {
		return fmt.Errorf("count stored tokens: %w", err)
	}
	k, err := st.CountOrgSecrets(ctx)
	if err != nil {
		return fmt.Errorf("count stored keys: %w", err)
	}
	if n+k > 0 {
		return ErrNoKey
	}
	return nil
}
