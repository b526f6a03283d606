package mcpclient

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
)

// TokenRewrapper is the part of the store RotateTokens uses.
type TokenRewrapper interface {
	// RewrapMCPTokens is store.MCPServers.RewrapMCPTokens.
	RewrapMCPTokens(ctx context.Context, rewrap func(s store.MCPServer) (string, error)) (int, error)
}

// RotateTokens re-seals every registered server's stored auth token, in
// every organisation, under kr's primary key (quiver secrets rotate), all
// or nothing, and returns how many changed. A token kr cannot open fails
// the whole rotation with an error naming its server ("server "NAME" of
// "ORG": ..."), and nothing is written.
func RotateTokens(ctx context.Context, st TokenRewrapper, kr *secret.Keyring) (int, error) {
	return st.RewrapMCPTokens(ctx, func(s store.MCPServer) (string, error) {
		out, err := kr.Rotate(s.Token, TokenAAD(s.OrgID, s.ID))
		if err != nil {
			return "", fmt.Errorf("server %q of %q: %w", s.Name, s.OrgID, err)
		}
		return out, nil
	})
}
