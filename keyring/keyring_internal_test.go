package keyring

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
)

// Test keys: fixed bytes, so that two rings built from one are the same
// keyring, as two replicas handed one key file are.
var (
	keyA     = bytes.Repeat([]byte{0xa1}, secret.KeySize)
	keyB     = bytes.Repeat([]byte{0xb2}, secret.KeySize)
	keyOther = bytes.Repeat([]byte{0xc3}, secret.KeySize)
)

// fixedKeyTime stamps the records these tests store.
var fixedKeyTime = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// ring returns a keyring of keys, the first primary.
func ring(t *testing.T, keys ...secret.Key) *secret.Keyring {
	t.Helper()
	kr, err := secret.New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// ringA is key a alone, ringB key b alone.
func ringA(t *testing.T) *secret.Keyring { return ring(t, secret.Key{ID: "a", Secret: keyA}) }
func ringB(t *testing.T) *secret.Keyring { return ring(t, secret.Key{ID: "b", Secret: keyB}) }

// keyBackends open an empty store of each backend, closed when the test
// ends; PostgreSQL's is skipped without a server (internal/pgtest).
var keyBackends = []struct {
	name string
	open func(t *testing.T) (store.Store, error)
}{
	{"SQLite", func(t *testing.T) (store.Store, error) { return sqlite.Open(t.Context(), t.TempDir()) }},
	{"PostgreSQL", func(t *testing.T) (store.Store, error) { return postgres.Open(t.Context(), pgtest.URL(t)) }},
}

// onBackends runs test on each backend, as a subtest named for it.
func onBackends(t *testing.T, test func(t *testing.T, openKeyStore func(*testing.T) store.Store)) {
	for _, b := range keyBackends {
		t.Run(b.name, func(t *testing.T) {
			test(t, func(t *testing.T) store.Store {
				t.Helper()
				st, err := b.open(t)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}

// storedCheck returns the store's keyring check.
func storedCheck(t *testing.T, st store.KeyChecks) string {
	t.Helper()
	sealed, err := st.KeyCheck(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

// wantRefused fails unless err is the keyring refusal with exactly msg.
func wantRefused(t *testing.T, what string, err error, msg string) {
	t.Helper()
	var ke *keyringError
	if !errors.As(err, &ke) {
		t.Fatalf("%s: err = %v, want the keyring refusal", what, err)
	}
	if err.Error() != msg {
		t.Errorf("%s: message\n got %q\nwant %q", what, err.Error(), msg)
	}
}

// The refusals, as an operator reads them.
const (
	refusedAWithB  = `the configured keys (b) cannot open this database's secrets (sealed under key a); every replica and command needs the same keyring (secrets.key_file or secrets.keys_env, see docs/postgres.md, "Secrets with several replicas"); refusing to start`
	refusedNoKeyA  = `this database's secrets were sealed with a keyring (key a) but no encryption key is configured; every replica and command needs the same keyring (secrets.key_file or secrets.keys_env, see docs/postgres.md, "Secrets with several replicas"); refusing to start`
	refusedSameIDA = `the configured keys (a) cannot open this database's secrets (sealed under a different key with the id a); every replica and command needs the same keyring (secrets.key_file or secrets.keys_env, see docs/postgres.md, "Secrets with several replicas"); refusing to start`
)

// TestKeyCheckFirstStartStores: the first start with a keyring stores a
// check sealed under its primary key, which that keyring opens.
func TestKeyCheckFirstStartStores(t *testing.T) { onBackends(t, testKeyCheckFirstStartStores) }

func testKeyCheckFirstStartStores(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	st := openKeyStore(t)
	if err := Check(t.Context(), st, ringA(t)); err != nil {
		t.Fatalf("first start: %v", err)
	}
	sealed := storedCheck(t, st)
	if id, err := secret.SealedKeyID(sealed); err != nil || id != "a" {
		t.Fatalf("stored check %q names key %q (%v), want a", sealed, id, err)
	}
	if pt, err := ringA(t).Open(sealed, []byte(keyCheckAAD)); err != nil || string(pt) != keyCheckPlaintext {
		t.Errorf("the stored check opens to %q, %v", pt, err)
	}
}

// TestKeyCheckLaterStarts starts again over a stored check with keyrings
// that hold its key (pass, the check unchanged) and ones that do not
// (refused with the one message, the check unchanged).
func TestKeyCheckLaterStarts(t *testing.T) { onBackends(t, testKeyCheckLaterStarts) }

func testKeyCheckLaterStarts(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	st := openKeyStore(t)
	if err := Check(t.Context(), st, ringA(t)); err != nil {
		t.Fatal(err)
	}
	first := storedCheck(t, st)
	tests := []struct {
		name string
		kr   *secret.Keyring
		want string // the refusal; "" to pass
	}{
		{"SameKey", ringA(t), ""},
		{"OldKeyBesideANewPrimary", ring(t, secret.Key{ID: "b", Secret: keyB}, secret.Key{ID: "a", Secret: keyA}), ""},
		{"NewKeyBesideTheOldPrimary", ring(t, secret.Key{ID: "a", Secret: keyA}, secret.Key{ID: "b", Secret: keyB}), ""},
		{"OtherKey", ringB(t), refusedAWithB},
		{"OtherKeySameID", ring(t, secret.Key{ID: "a", Secret: keyOther}), refusedSameIDA},
		{"NoKey", nil, refusedNoKeyA},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(t.Context(), st, tc.kr)
			if tc.want == "" && err != nil {
				t.Errorf("start: %v, want it to pass", err)
			}
			if tc.want != "" {
				wantRefused(t, "start", err, tc.want)
			}
			if got := storedCheck(t, st); got != first {
				t.Errorf("the check changed from %q to %q", first, got)
			}
		})
	}
}

// TestKeyCheckRefusalNamesNoKeyMaterial: the refusal names key ids, never
// the bytes of a key, in any encoding a key file or variable holds.
func TestKeyCheckRefusalNamesNoKeyMaterial(t *testing.T) {
	onBackends(t, testKeyCheckRefusalNamesNoKeyMaterial)
}

func testKeyCheckRefusalNamesNoKeyMaterial(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	st := openKeyStore(t)
	if err := Check(t.Context(), st, ringA(t)); err != nil {
		t.Fatal(err)
	}
	err := Check(t.Context(), st, ringB(t))
	if err == nil {
		t.Fatal("another key passed")
	}
	for _, key := range [][]byte{keyA, keyB} {
		for _, enc := range []string{string(key), base64.StdEncoding.EncodeToString(key), hex.EncodeToString(key)} {
			if strings.Contains(err.Error(), enc) {
				t.Errorf("the refusal %q quotes key material %q", err, enc)
			}
		}
	}
}

// TestKeyCheckNoKey: without a keyring, a store with neither sealed
// secrets nor a check opens; one with a check is refused (the deployment
// uses a keyring); one with sealed secrets keeps its own refusal.
func TestKeyCheckNoKey(t *testing.T) { onBackends(t, testKeyCheckNoKey) }

func testKeyCheckNoKey(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	st := openKeyStore(t)
	if err := Check(t.Context(), st, nil); err != nil {
		t.Fatalf("an empty store without a key: %v", err)
	}
	if got := storedCheck(t, st); got != "" {
		t.Fatalf("a start without a key stored the check %q", got)
	}
	putToken(t, st, ringA(t), "srv1")
	if err := Check(t.Context(), st, nil); !errors.Is(err, ErrNoKey) {
		t.Errorf("stored tokens without a key: err = %v, want ErrNoKey", err)
	}
}

// TestKeyCheckRotate: rotation under a ring whose new primary sits beside
// the old key re-seals the check under the new key, after which the new
// key alone starts and the old one alone is refused; rotating again
// changes nothing, and rotation with keys that cannot open the check is
// refused, leaving it.
func TestKeyCheckRotate(t *testing.T) { onBackends(t, testKeyCheckRotate) }

func testKeyCheckRotate(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	st := openKeyStore(t)
	if err := Check(t.Context(), st, ringA(t)); err != nil {
		t.Fatal(err)
	}
	both := ring(t, secret.Key{ID: "b", Secret: keyB}, secret.Key{ID: "a", Secret: keyA})
	if err := RotateCheck(t.Context(), st, both); err != nil {
		t.Fatalf("rotate: %v", err)
	}
	rotated := storedCheck(t, st)
	if id, _ := secret.SealedKeyID(rotated); id != "b" {
		t.Fatalf("after rotation the check is under %q, want b", id)
	}
	if err := Check(t.Context(), st, ringB(t)); err != nil {
		t.Errorf("the new key alone after rotation: %v", err)
	}
	wantRefused(t, "the old key alone after rotation", Check(t.Context(), st, ringA(t)),
		strings.NewReplacer("(b)", "(a)", "key a)", "key b)").Replace(refusedAWithB))
	if err := RotateCheck(t.Context(), st, both); err != nil || storedCheck(t, st) != rotated {
		t.Errorf("rotating again: %v, check %q, want it unchanged", err, storedCheck(t, st))
	}
	wantRefused(t, "rotate with other keys", RotateCheck(t.Context(), st, ring(t, secret.Key{ID: "c", Secret: keyOther})),
		strings.NewReplacer("(b)", "(c)", "key a)", "key b)").Replace(refusedAWithB))
	if got := storedCheck(t, st); got != rotated {
		t.Errorf("a refused rotation changed the check to %q", got)
	}
}

// TestKeyCheckUpgrade: over a store from before the check, holding
// secrets sealed under key a, keys that open none of them are refused
// and store no check; key a stores it, even when a stale value (under a
// key since dropped) sits beside the secrets it opens.
func TestKeyCheckUpgrade(t *testing.T) { onBackends(t, testKeyCheckUpgrade) }

func testKeyCheckUpgrade(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	st := openKeyStore(t)
	putToken(t, st, ringA(t), "srv1")
	putSettingsKey(t, st, ringA(t), "acme")
	wantRefused(t, "other keys over stored secrets", Check(t.Context(), st, ringB(t)), refusedAWithB)
	if got := storedCheck(t, st); got != "" {
		t.Fatalf("a refused start stored the check %q", got)
	}
	putToken(t, st, ring(t, secret.Key{ID: "dropped", Secret: keyOther}), "stale")
	if err := Check(t.Context(), st, ringA(t)); err != nil {
		t.Fatalf("the deployment's key: %v", err)
	}
	if id, _ := secret.SealedKeyID(storedCheck(t, st)); id != "a" {
		t.Errorf("the first check names key %q, want a", id)
	}
}

// TestKeyCheckConcurrentFirstStarts races first starts on one store: with
// one keyring every start passes and one check is stored; with two, the
// keyring whose check was stored passes and the other is refused.
func TestKeyCheckConcurrentFirstStarts(t *testing.T) {
	onBackends(t, testKeyCheckConcurrentFirstStarts)
}

func testKeyCheckConcurrentFirstStarts(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	t.Run("SameKeys", func(t *testing.T) {
		st := openKeyStore(t)
		errs := raceStarts(t, st, ringA(t), ringA(t), ringA(t), ringA(t))
		for i, err := range errs {
			if err != nil {
				t.Errorf("start %d: %v", i, err)
			}
		}
		if storedCheck(t, st) == "" {
			t.Error("no check stored")
		}
	})
	t.Run("DifferentKeys", func(t *testing.T) {
		st := openKeyStore(t)
		errs := raceStarts(t, st, ringA(t), ringB(t))
		winner := "a"
		if id, _ := secret.SealedKeyID(storedCheck(t, st)); id == "b" {
			winner = "b"
		}
		for i, id := range []string{"a", "b"} {
			var ke *keyringError
			switch {
			case id == winner && errs[i] != nil:
				t.Errorf("start with key %s, whose check was stored: %v", id, errs[i])
			case id != winner && !errors.As(errs[i], &ke):
				t.Errorf("start with key %s, the check under %s: err = %v, want the refusal", id, winner, errs[i])
			}
		}
	})
}

// raceStarts runs checkKeyring with each keyring at once and returns
// their answers.
func raceStarts(t *testing.T, st Store, rings ...*secret.Keyring) []error {
	errs := make([]error, len(rings))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, kr := range rings {
		wg.Go(func() {
			<-start
			errs[i] = Check(t.Context(), st, kr)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// TestKeyCheckLosesFirstSet: a start that finds no check but loses the
// first set to another process opens that process's check instead —
// passing when it was sealed with the same keys, refused when not.
func TestKeyCheckLosesFirstSet(t *testing.T) { onBackends(t, testKeyCheckLosesFirstSet) }

func testKeyCheckLosesFirstSet(t *testing.T, openKeyStore func(*testing.T) store.Store) {
	tests := []struct {
		name string
		peer *secret.Keyring
		want string
	}{
		{"PeerSameKeys", ringA(t), ""},
		{"PeerOtherKeys", ringB(t), strings.NewReplacer("(b)", "(a)", "key a)", "key b)").Replace(refusedAWithB)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openKeyStore(t)
			peerCheck, err := tc.peer.Seal([]byte(keyCheckPlaintext), []byte(keyCheckAAD))
			if err != nil {
				t.Fatal(err)
			}
			racing := &peerFirst{Store: st, peerCheck: peerCheck}
			err = Check(t.Context(), racing, ringA(t))
			if !racing.raced {
				t.Fatal("the start never tried the first set")
			}
			if tc.want == "" && err != nil {
				t.Errorf("start: %v", err)
			}
			if tc.want != "" {
				wantRefused(t, "start", err, tc.want)
			}
			if got := storedCheck(t, st); got != peerCheck {
				t.Errorf("the check is %q, want the peer's", got)
			}
		})
	}
}

// peerFirst is a store where another process stores its check (peerCheck)
// just before this one's first set.
type peerFirst struct {
	Store
	peerCheck string
	raced     bool
}

func (p *peerFirst) SetKeyCheck(ctx context.Context, old, sealed string) error {
	if !p.raced {
		p.raced = true
		if err := p.Store.SetKeyCheck(ctx, "", p.peerCheck); err != nil {
			return err
		}
	}
	return p.Store.SetKeyCheck(ctx, old, sealed)
}

// putToken registers an MCP server in org default holding a token sealed
// with kr, as mcp add does.
func putToken(t *testing.T, st store.MCPServers, kr *secret.Keyring, id string) {
	t.Helper()
	token, err := kr.Seal([]byte("token-"+id), mcpclient.TokenAAD("default", id))
	if err != nil {
		t.Fatal(err)
	}
	srv := store.MCPServer{ID: id, OrgID: "default", Name: id, URL: "https://" + id + ".example/mcp",
		Type: store.MCPGeneral, Token: token, CreatedAt: fixedKeyTime, UpdatedAt: fixedKeyTime}
	if err := st.CreateMCPServer(t.Context(), srv, 0); err != nil {
		t.Fatal(err)
	}
}

// putSettingsKey creates the organisation org and saves its settings with
// one API key sealed with kr, as a settings save does.
func putSettingsKey(t *testing.T, st store.Store, kr *secret.Keyring, org string) {
	t.Helper()
	if err := st.CreateOrg(t.Context(), store.Org{ID: org, Name: org, CreatedAt: fixedKeyTime}); err != nil {
		t.Fatal(err)
	}
	sealed, err := kr.Seal([]byte("sk-"+org), settings.SecretAAD(org, "openai_api_key"))
	if err != nil {
		t.Fatal(err)
	}
	s := store.OrgSettings{OrgID: org, Doc: []byte(`{}`), Secrets: map[string]string{"openai_api_key": sealed}, UpdatedAt: fixedKeyTime}
	if _, err := st.PutOrgSettings(t.Context(), s); err != nil {
		t.Fatal(err)
	}
}
