package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fixed test keys: deterministic, so failures reproduce.
var (
	keyOld   = bytes.Repeat([]byte{0x11}, KeySize)
	keyNew   = bytes.Repeat([]byte{0x22}, KeySize)
	keyOther = bytes.Repeat([]byte{0x33}, KeySize)
)

func b64key(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

func mustRing(t testing.TB, keys ...Key) *Keyring {
	t.Helper()
	r, err := New(keys...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func mustSeal(t testing.TB, r *Keyring, pt, aad string) string {
	t.Helper()
	s, err := r.Seal([]byte(pt), []byte(aad))
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return s
}

const (
	token = "ghp_SuperSecretToken1234567890"
	row1  = "mcp_server/org1/srv1/token"
	row2  = "mcp_server/org1/srv2/token"
)

func TestRoundTrip(t *testing.T) {
	r := mustRing(t, Key{ID: "k1", Secret: keyNew})
	tests := []struct {
		name string
		pt   []byte
		aad  []byte
	}{
		{"token", []byte(token), []byte(row1)},
		{"empty plaintext", []byte{}, []byte(row1)},
		{"nil aad", []byte(token), nil},
		{"binary", []byte{0, 1, 2, 0xff, ':', '\n'}, []byte("x")},
		{"long", bytes.Repeat([]byte("a"), 4096), []byte(row2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := r.Seal(tt.pt, tt.aad)
			if err != nil {
				t.Fatalf("Seal: %v", err)
			}
			if !strings.HasPrefix(s, "v1:k1:") {
				t.Errorf("Seal = %q, want prefix v1:k1:", s)
			}
			got, err := r.Open(s, tt.aad)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if diff := cmp.Diff(tt.pt, got, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("Open mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSealFormat(t *testing.T) {
	r := mustRing(t, Key{Secret: keyNew})
	s := mustSeal(t, r, token, row1)
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		t.Fatalf("Seal = %q, want 3 colon-separated parts", s)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatalf("body not base64: %v", err)
	}
	want := []string{"v1", KeyID(keyNew)}
	if diff := cmp.Diff(want, parts[:2]); diff != "" {
		t.Errorf("prefix (-want +got):\n%s", diff)
	}
	if got, want := len(raw), 12+len(token)+16; got != want {
		t.Errorf("raw length = %d, want %d (nonce|ciphertext|tag)", got, want)
	}
	if len(KeyID(keyNew)) != 8 {
		t.Errorf("KeyID = %q, want 8 hex chars", KeyID(keyNew))
	}
}

func TestSealsDiffer(t *testing.T) {
	r := mustRing(t, Key{ID: "k1", Secret: keyNew})
	a, b := mustSeal(t, r, token, row1), mustSeal(t, r, token, row1)
	if a == b {
		t.Fatalf("two seals of the same plaintext are equal: %q", a)
	}
	ra, _ := base64.StdEncoding.DecodeString(strings.Split(a, ":")[2])
	rb, _ := base64.StdEncoding.DecodeString(strings.Split(b, ":")[2])
	if bytes.Equal(ra[:12], rb[:12]) {
		t.Errorf("nonces repeat: %x", ra[:12])
	}
}

func TestAADBinding(t *testing.T) {
	r := mustRing(t, Key{ID: "k1", Secret: keyNew})
	s := mustSeal(t, r, token, row1)
	tests := []struct {
		name string
		aad  []byte
	}{
		{"other row", []byte(row2)},
		{"empty", nil},
		{"prefix", []byte(row1[:len(row1)-1])},
		{"suffix", []byte(row1 + "x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Open(s, tt.aad)
			if !errors.Is(err, ErrDecrypt) {
				t.Fatalf("Open err = %v, want ErrDecrypt", err)
			}
			if got != nil {
				t.Errorf("Open returned plaintext %q on error", got)
			}
		})
	}
}

// reseal rebuilds a sealed value from its id and raw bytes.
func reseal(id string, raw []byte) string {
	return "v1:" + id + ":" + base64.StdEncoding.EncodeToString(raw)
}

func TestTamper(t *testing.T) {
	r := mustRing(t, Key{ID: "k1", Secret: keyNew})
	s := mustSeal(t, r, token, row1)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "v1:k1:"))
	if err != nil {
		t.Fatal(err)
	}
	regions := []struct {
		name       string
		start, end int
	}{
		{"nonce", 0, 12},
		{"ciphertext", 12, len(raw) - 16},
		{"tag", len(raw) - 16, len(raw)},
	}
	for _, rg := range regions {
		t.Run(rg.name, func(t *testing.T) {
			for i := rg.start; i < rg.end; i++ {
				mod := bytes.Clone(raw)
				mod[i] ^= 0x01
				if _, err := r.Open(reseal("k1", mod), []byte(row1)); !errors.Is(err, ErrDecrypt) {
					t.Errorf("byte %d flipped: err = %v, want ErrDecrypt", i, err)
				}
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		if _, err := r.Open(reseal("k1", raw[:len(raw)-1]), []byte(row1)); !errors.Is(err, ErrDecrypt) {
			t.Errorf("err = %v, want ErrDecrypt", err)
		}
	})
	t.Run("appended", func(t *testing.T) {
		if _, err := r.Open(reseal("k1", append(bytes.Clone(raw), 0)), []byte(row1)); !errors.Is(err, ErrDecrypt) {
			t.Errorf("err = %v, want ErrDecrypt", err)
		}
	})
	t.Run("same id other key", func(t *testing.T) {
		other := mustRing(t, Key{ID: "k1", Secret: keyOther})
		if _, err := other.Open(s, []byte(row1)); !errors.Is(err, ErrDecrypt) {
			t.Errorf("err = %v, want ErrDecrypt", err)
		}
	})
}

func TestUnknownKey(t *testing.T) {
	oldRing := mustRing(t, Key{ID: "old", Secret: keyOld})
	newRing := mustRing(t, Key{ID: "new", Secret: keyNew})
	s := mustSeal(t, oldRing, token, row1)
	_, err := newRing.Open(s, []byte(row1))
	if !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey", err)
	}
	if !strings.Contains(err.Error(), `"old"`) {
		t.Errorf("err = %q, want it to name the key id", err)
	}
}

// TestSealedKeyID reads the key id from values sealed under named and
// default ids, by rings whose primary is each of their keys.
func TestSealedKeyID(t *testing.T) {
	tests := []struct {
		name string
		ring *Keyring
		want string
	}{
		{"named", mustRing(t, Key{ID: "old", Secret: keyOld}), "old"},
		{"default id", mustRing(t, Key{Secret: keyNew}), KeyID(keyNew)},
		{"primary of two", mustRing(t, Key{ID: "new", Secret: keyNew}, Key{ID: "old", Secret: keyOld}), "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SealedKeyID(mustSeal(t, tt.ring, token, row1))
			if err != nil || got != tt.want {
				t.Errorf("SealedKeyID = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	r := mustRing(t, Key{ID: "k1", Secret: keyNew})
	short := base64.StdEncoding.EncodeToString(make([]byte, 27))
	valid := mustSeal(t, r, token, row1)
	body := strings.TrimPrefix(valid, "v1:k1:")
	tests := []struct {
		name   string
		sealed string
	}{
		{"empty", ""},
		{"plaintext token", token},
		{"no version", "k1:" + body},
		{"version only", "v1"},
		{"version colon", "v1:"},
		{"no body separator", "v1:k1"},
		{"v2", "v2:k1:" + body},
		{"uppercase version", "V1:k1:" + body},
		{"empty id", "v1::" + body},
		{"bad id chars", "v1:k 1:" + body},
		{"id too long", "v1:" + strings.Repeat("k", 33) + ":" + body},
		{"empty body", "v1:k1:"},
		{"bad base64", "v1:k1:!!!!"},
		{"url base64", "v1:k1:" + strings.NewReplacer("+", "-", "/", "_").Replace(body) + "-_"},
		{"unpadded", "v1:k1:" + strings.TrimRight(body, "=") + "A"},
		{"extra colon", "v1:k1:" + body + ":x"},
		{"whitespace", "v1:k1: " + body},
		{"too short", "v1:k1:" + short},
		{"too long", "v1:k1:" + strings.Repeat("A", maxSealedLen)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Open(tt.sealed, []byte(row1))
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Open(%.40q) err = %v, want ErrMalformed", tt.sealed, err)
			}
			if got != nil {
				t.Errorf("Open returned plaintext on error")
			}
			if _, err := r.Rotate(tt.sealed, []byte(row1)); !errors.Is(err, ErrMalformed) {
				t.Errorf("Rotate err = %v, want ErrMalformed", err)
			}
			if !r.NeedsRotation(tt.sealed) {
				t.Errorf("NeedsRotation = false for malformed input")
			}
			if id, err := SealedKeyID(tt.sealed); !errors.Is(err, ErrMalformed) || id != "" {
				t.Errorf("SealedKeyID = %q, %v; want ErrMalformed", id, err)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	oldRing := mustRing(t, Key{ID: "old", Secret: keyOld})
	both := mustRing(t, Key{ID: "new", Secret: keyNew}, Key{ID: "old", Secret: keyOld})
	newOnly := mustRing(t, Key{ID: "new", Secret: keyNew})

	oldSealed := mustSeal(t, oldRing, token, row1)
	if !both.NeedsRotation(oldSealed) {
		t.Fatalf("NeedsRotation(old) = false, want true")
	}
	// Old ciphertext still opens while the old key is in the ring.
	if got, err := both.Open(oldSealed, []byte(row1)); err != nil || string(got) != token {
		t.Fatalf("Open(old) with both keys = %q, %v", got, err)
	}
	rotated, err := both.Rotate(oldSealed, []byte(row1))
	if err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	if !strings.HasPrefix(rotated, "v1:new:") || both.NeedsRotation(rotated) {
		t.Errorf("Rotate = %q, want sealed under primary \"new\"", rotated)
	}
	// After rotation the old key can be retired.
	if got, err := newOnly.Open(rotated, []byte(row1)); err != nil || string(got) != token {
		t.Errorf("Open(rotated) with new key only = %q, %v", got, err)
	}
	if _, err := newOnly.Open(oldSealed, []byte(row1)); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Open(old) after retiring = %v, want ErrUnknownKey", err)
	}
	// Rotation keeps the row binding.
	if _, err := both.Open(rotated, []byte(row2)); !errors.Is(err, ErrDecrypt) {
		t.Errorf("Open(rotated, other row) = %v, want ErrDecrypt", err)
	}
	// Rotating a current value is a verified no-op.
	again, err := both.Rotate(rotated, []byte(row1))
	if err != nil || again != rotated {
		t.Errorf("Rotate(current) = %q, %v; want unchanged", again, err)
	}
	// Rotation with the wrong row fails rather than rebinding.
	if _, err := both.Rotate(oldSealed, []byte(row2)); !errors.Is(err, ErrDecrypt) {
		t.Errorf("Rotate(wrong aad) = %v, want ErrDecrypt", err)
	}
}

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name        string
		spec        string
		wantPrimary string
		wantIDs     []string
		wantErr     string
	}{
		{"one", "k1:" + b64key(keyNew), "k1", []string{"k1"}, ""},
		{"two, first primary", "k2:" + b64key(keyNew) + ", k1:" + b64key(keyOld), "k2", []string{"k1", "k2"}, ""},
		{"derived id", b64key(keyNew), KeyID(keyNew), []string{KeyID(keyNew)}, ""},
		{"blank entries", ",k1:" + b64key(keyNew) + ",,", "k1", []string{"k1"}, ""},
		{"empty", "", "", nil, "no keys"},
		{"short key", "k1:" + b64key(keyNew[:16]), "", nil, "got 16 bytes, want 32"},
		{"bad base64", "k1:" + b64key(keyNew)[:10] + "*" + b64key(keyNew)[11:], "", nil, "invalid base64"},
		{"bad id", "k 1:" + b64key(keyNew), "", nil, "invalid key id"},
		{"duplicate id", "k1:" + b64key(keyNew) + ",k1:" + b64key(keyOld), "", nil, "duplicate key id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseKeys(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				assertNoLeak(t, err.Error(), tt.spec)
				return
			}
			if err != nil {
				t.Fatalf("ParseKeys: %v", err)
			}
			if got := r.PrimaryID(); got != tt.wantPrimary {
				t.Errorf("PrimaryID = %q, want %q", got, tt.wantPrimary)
			}
			if diff := cmp.Diff(tt.wantIDs, r.IDs()); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		keys    []Key
		wantErr string
	}{
		{"none", nil, "no keys"},
		{"wrong size", []Key{{ID: "a", Secret: keyNew[:31]}}, "got 31 bytes"},
		{"bad id", []Key{{ID: "a:b", Secret: keyNew}}, "invalid key id"},
		{"duplicate derived id", []Key{{Secret: keyNew}, {Secret: keyNew}}, "duplicate key id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.keys...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

func writeKeyFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKeyFile(t *testing.T) {
	good := "# quiver keys\n\nnew:" + b64key(keyNew) + "\nold:" + b64key(keyOld) + "\n"
	tests := []struct {
		name        string
		content     string
		mode        os.FileMode
		wantPrimary string
		wantErr     string
	}{
		{"0600", good, 0o600, "new", ""},
		{"0400", good, 0o400, "new", ""},
		{"group readable", good, 0o640, "", "allows access by group or others"},
		{"world readable", good, 0o644, "", "mode 0644"},
		{"group writable", good, 0o620, "", "allows access by group or others"},
		{"empty", "# nothing\n", 0o600, "", "no keys"},
		{"short key", "new:" + b64key(keyNew)[:20] + "\n", 0o600, "", "got 15 bytes, want 32"},
		{"bad base64", "new:" + b64key(keyNew)[:21] + "\n", 0o600, "", "key new: invalid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeKeyFile(t, tt.content, tt.mode)
			r, err := LoadKeyFile(p)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				assertNoLeak(t, err.Error(), b64key(keyNew), b64key(keyNew)[:20], b64key(keyOld))
				return
			}
			if err != nil {
				t.Fatalf("LoadKeyFile: %v", err)
			}
			if diff := cmp.Diff([]string{"new", "old"}, r.IDs()); diff != "" || r.PrimaryID() != tt.wantPrimary {
				t.Errorf("IDs diff %s, primary %q want %q", diff, r.PrimaryID(), tt.wantPrimary)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if _, err := LoadKeyFile(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
}

// assertNoLeak fails if s contains any of the secrets (or a long piece of one).
func assertNoLeak(t *testing.T, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		if strings.Contains(s, sec) {
			t.Errorf("%q leaks secret %q", s, sec)
		}
		if len(sec) > 16 && strings.Contains(s, sec[4:16]) {
			t.Errorf("%q leaks part of secret %q", s, sec)
		}
	}
}

func TestErrorsDoNotLeak(t *testing.T) {
	both := mustRing(t, Key{ID: "new", Secret: keyNew}, Key{ID: "old", Secret: keyOld})
	s := mustSeal(t, both, token, row1)
	body := strings.TrimPrefix(s, "v1:new:")
	raw, _ := base64.StdEncoding.DecodeString(body)
	raw[len(raw)-1] ^= 1
	cases := []struct {
		name   string
		sealed string
		aad    string
	}{
		{"wrong aad", s, row2},
		{"tampered", reseal("new", raw), row1},
		{"unknown key", "v1:gone:" + body, row1},
		{"malformed", "v1:new:" + body + "*", row1},
		{"plaintext stored", token, row1},
	}
	secrets := []string{token, body, b64key(keyNew), b64key(keyOld), string(keyNew), fmt.Sprintf("%x", keyNew)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := both.Open(c.sealed, []byte(c.aad))
			if err == nil {
				t.Fatal("Open succeeded")
			}
			assertNoLeak(t, err.Error(), secrets...)
			_, err = both.Rotate(c.sealed, []byte(c.aad))
			if err == nil {
				t.Fatal("Rotate succeeded")
			}
			assertNoLeak(t, err.Error(), secrets...)
		})
	}
	t.Run("keyring printing", func(t *testing.T) {
		for _, format := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
			out := fmt.Sprintf(format, both)
			assertNoLeak(t, out, secrets...)
			if !strings.Contains(out, "primary: new") {
				t.Errorf("Sprintf(%s) = %q, want key ids", format, out)
			}
		}
	})
}

func TestKeyringConcurrent(t *testing.T) {
	r := mustRing(t, Key{ID: "k1", Secret: keyNew})
	done := make(chan error)
	for i := range 8 {
		go func() {
			aad := []byte(fmt.Sprint("row/", i))
			s, err := r.Seal([]byte(token), aad)
			if err == nil {
				_, err = r.Open(s, aad)
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
