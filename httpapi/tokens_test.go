package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/store"
)

func TestTokens(t *testing.T) {
	f := newFixture(t, nil)
	f.clock.Advance(time.Minute) // newer than the fixture's token
	now := f.clock.Now()

	var created httpapi.NewToken
	f.ok(f.do(f.bob, "POST", "/api/tokens", map[string]any{"label": "ci", "expires_in_days": 1}), http.StatusCreated, &created)
	if created.Token == "" || len(created.ID) != 16 || created.Label != "ci" || created.ExpiresAt == nil || !created.ExpiresAt.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("created %+v", created)
	}
	if strings.Contains(created.Token, "=") || len(created.Token) != 43 {
		t.Errorf("secret %q is not 32 bytes of unpadded base64url", created.Token)
	}
	stored, err := f.st.LookupCredential(f.ctx, store.CredAPIToken, accounts.HashSecret(created.Token), now)
	f.must(err)
	if stored.Hash == created.Token || !strings.HasPrefix(stored.Hash, created.ID) {
		t.Errorf("stored %+v: want the secret's hash, named by the id", stored)
	}

	ci := &who{token: created.Token}
	var me httpapi.Me
	f.ok(f.do(ci, "GET", "/api/me", nil), 200, &me)
	if me.UserID != "bob" {
		t.Errorf("the new token authenticates %q, want bob", me.UserID)
	}

	r := f.do(f.bob, "GET", "/api/tokens", nil)
	var list struct{ Tokens []httpapi.Token }
	f.ok(r, 200, &list)
	if len(list.Tokens) != 2 || list.Tokens[0].ID != created.ID || list.Tokens[1].ExpiresAt != nil {
		t.Errorf("list %+v: want the new token first, then the fixture's without expiry", list.Tokens)
	}
	if strings.Contains(string(r.body), created.Token) || strings.Contains(string(r.body), stored.Hash) {
		t.Error("the list shows a secret or a whole hash")
	}

	// Members manage only their own; admins anyone's in their organisation.
	wantError(t, f.do(f.carol, "DELETE", "/api/tokens/"+created.ID, nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.carol, "GET", "/api/tokens?user=bob", nil), http.StatusForbidden, "forbidden")
	wantError(t, f.do(f.carol, "DELETE", "/api/tokens/"+created.ID+"?user=bob", nil), http.StatusForbidden, "forbidden")
	wantError(t, f.do(f.dave, "GET", "/api/tokens?user=bob", nil), http.StatusNotFound, "not_found")
	f.ok(f.do(f.alice, "GET", "/api/tokens?user=bob", nil), 200, &list)
	if len(list.Tokens) != 2 {
		t.Errorf("admin sees %d of bob's tokens, want 2", len(list.Tokens))
	}

	f.clock.Advance(25 * time.Hour)
	wantError(t, f.do(ci, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")

	f.ok(f.do(f.bob, "DELETE", "/api/tokens/"+created.ID, nil), http.StatusNoContent, nil)
	wantError(t, f.do(f.bob, "DELETE", "/api/tokens/"+created.ID, nil), http.StatusNotFound, "not_found")
	wantError(t, f.do(f.bob, "DELETE", "/api/tokens/"+created.ID[:8], nil), http.StatusNotFound, "not_found")

	var mine httpapi.NewToken
	f.ok(f.do(f.bob, "POST", "/api/tokens", map[string]any{}), http.StatusCreated, &mine)
	f.ok(f.do(f.alice, "DELETE", "/api/tokens/"+mine.ID+"?user=bob", nil), http.StatusNoContent, nil)
	wantError(t, f.do(&who{token: mine.Token}, "GET", "/api/me", nil), http.StatusUnauthorized, "unauthorized")

	wantError(t, f.do(f.bob, "POST", "/api/tokens", map[string]any{"expires_in_days": -1}), http.StatusBadRequest, "invalid_request")
	wantError(t, f.do(f.bob, "POST", "/api/tokens", map[string]any{"label": strings.Repeat("x", 101)}), http.StatusBadRequest, "invalid_request")
}
