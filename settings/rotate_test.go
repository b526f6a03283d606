package settings_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
)

// TestRotateKeys: every organisation's stored keys are re-sealed under
// the primary key, so that the new key alone opens them; a key the
// keyring cannot open fails the rotation naming it, and changes nothing.
func TestRotateKeys(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	oldKR := keyring(t, "old", 1)
	newKR := keyring(t, "new", 2)
	both, err := secret.New(secret.Key{ID: "new", Secret: bytes.Repeat([]byte{2}, secret.KeySize)}, secret.Key{ID: "old", Secret: bytes.Repeat([]byte{1}, secret.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	s := service(st, oldKR, config.Config{}, &builds{})
	for _, org := range []string{"acme", "other"} {
		up := publicUpdate(0)
		up.SetKeys = map[string]string{"openai_api_key": "sk-" + org}
		if _, err := s.Update(ctx, org, up); err != nil {
			t.Fatal(err)
		}
	}

	if n, err := settings.RotateKeys(ctx, st, newKR); n != 0 || err == nil || !strings.Contains(err.Error(), `key openai_api_key of "acme"`) {
		t.Fatalf("rotating under a keyring without the old key = %d, %v; want an error naming acme's key", n, err)
	}
	if rt, err := service(st, oldKR, config.Config{}, &builds{}).Runtime(ctx, "acme"); err != nil || rt.Version() != 1 {
		t.Fatalf("after a failed rotation the old key no longer reads version 1: %v", err)
	}
	if n, err := settings.RotateKeys(ctx, st, both); n != 2 || err != nil {
		t.Fatalf("RotateKeys = %d, %v; want 2, nil", n, err)
	}
	fresh := settings.New(settings.Config{Store: st, Keyring: newKR, Build: (&builds{}).build, Now: func() time.Time { return saved }})
	for _, org := range []string{"acme", "other"} {
		rt, err := fresh.Runtime(ctx, org)
		if err != nil || rt.Keys()["openai_api_key"] != "sk-"+org {
			t.Errorf("%s under the new key alone: %v", org, err)
		}
		if _, err := service(st, oldKR, config.Config{}, &builds{}).Runtime(ctx, org); err == nil {
			t.Errorf("%s still opens under the old key alone", org)
		}
	}
}
