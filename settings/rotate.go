package settings

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/secret"
)

// KeyRewrapper is the part of the store RotateKeys uses.
type KeyRewrapper interface {
	// RewrapOrgSecrets is store.Settings.RewrapOrgSecrets.
	RewrapOrgSecrets(ctx context.Context, rewrap func(orgID, name, sealed string) (string, error)) (int, error)
}

// RotateKeys re-seals every organisation's stored settings keys under
// kr's primary key (quiver secrets rotate), all or nothing, and returns
// how many changed. A key kr cannot open fails the whole rotation with an
// error naming it ("key NAME of "ORG": ..."), and nothing is written.
func RotateKeys(ctx context.Context, st KeyRewrapper, kr *secret.Keyring) (int, error) {
	return st.RewrapOrgSecrets(ctx, func(orgID, name, sealed string) (string, error) {
		out, err := kr.Rotate(sealed, SecretAAD(orgID, name))
		if err != nil {
			return "", fmt.Errorf("key %s of %q: %w", name, orgID, err)
		}
		return out, nil
	})
}
