package store

import (
	"context"
	"errors"
)

// KeyChecks stores the deployment's keyring check: one value sealed with
// the deployment's keyring, which every process that opens the store must
// be able to open before it seals or opens any secret. Replicas sharing a
// database that were handed different keyrings are caught by it at start
// rather than when one of them first meets a secret another sealed. The
// store keeps the sealed text only; it never sees a key or a plaintext.
type KeyChecks interface {
	// KeyCheck returns the stored check value, or "" when none is
	// stored.
	KeyCheck(ctx context.Context) (string, error)
	// SetKeyCheck replaces the stored check value with sealed when the
	// stored one is old, "" on either side meaning none (so old "" is a
	// first set and sealed "" removes the check). Another stored value
	// gives an error wrapping ErrConflict; a sealed value that is not
	// printable text (see CheckKeyCheck), an error. Each writes nothing.
	// Of concurrent calls over the same old value, in this process or in
	// another one on the same database, exactly one succeeds.
	SetKeyCheck(ctx context.Context, old, sealed string) error
}

// KeyCheckName is the name of the deployment row (the deployment table,
// name and value) that holds the keyring check, as every backend and an
// archive of the store keep it.
const KeyCheckName = "keyring_check"

// CheckKeyCheck refuses a check value that SetKeyCheck must not store:
// text other than PlainText, which PostgreSQL could not keep, and which
// no sealed value ever is. The error never quotes the value.
func CheckKeyCheck(sealed string) error {
	if PlainText(sealed) != sealed {
		return errors.New("keyring check: not printable text")
	}
	return nil
}
