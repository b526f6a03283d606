package mcpclient

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
)

// TestRotateTokens: every stored token is re-sealed under the primary
// key, bound to its row, so that the new key alone opens it; a token the
// keyring cannot open fails the rotation naming its server, and changes
// nothing.
func TestRotateTokens(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	key := func(id string, b byte) secret.Key {
		return secret.Key{ID: id, Secret: bytes.Repeat([]byte{b}, secret.KeySize)}
	}
	oldKR, _ := secret.New(key("old", 1))
	both, _ := secret.New(key("new", 2), key("old", 1))
	newKR, _ := secret.New(key("new", 2))
	for _, s := range []store.MCPServer{{ID: "a1", OrgID: org, Name: "alpha"}, {ID: "b2", OrgID: "org2", Name: "beta"}} {
		sealed, err := oldKR.Seal([]byte("tok-"+s.Name), TokenAAD(s.OrgID, s.ID))
		if err != nil {
			t.Fatal(err)
		}
		s.Token, s.URL, s.Type, s.CreatedAt, s.UpdatedAt = sealed, "https://mcp.example/"+s.Name, store.MCPGeneral, t0, t0
		if err := st.CreateMCPServer(ctx, s, 0); err != nil {
			t.Fatal(err)
		}
	}

	if n, err := RotateTokens(ctx, st, newKR); n != 0 || err == nil || !strings.Contains(err.Error(), `server "alpha" of "org1"`) {
		t.Fatalf("rotating under a keyring without the old key = %d, %v; want an error naming alpha", n, err)
	}
	if s, _ := st.GetMCPServer(ctx, org, "alpha"); !opens(oldKR, s) {
		t.Fatal("a failed rotation changed alpha's token")
	}
	if n, err := RotateTokens(ctx, st, both); n != 2 || err != nil {
		t.Fatalf("RotateTokens = %d, %v; want 2, nil", n, err)
	}
	for _, want := range [][2]string{{org, "alpha"}, {"org2", "beta"}} {
		s, err := st.GetMCPServer(ctx, want[0], want[1])
		if err != nil || !opens(newKR, s) || opens(oldKR, s) {
			t.Errorf("%s after rotation: opens under the new key %v, under the old %v (%v)", want[1], opens(newKR, s), opens(oldKR, s), err)
		}
	}
}

// opens reports whether kr opens s's token to its plaintext.
func opens(kr *secret.Keyring, s store.MCPServer) bool {
	pt, err := kr.Open(s.Token, TokenAAD(s.OrgID, s.ID))
	return err == nil && string(pt) == "tok-"+s.Name
}
