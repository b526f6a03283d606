package secret

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
)

// KeySize is the length in bytes of every key: AES-256.
const KeySize = 32

// maxKeyIDLen bounds key ids so that they stay short in every sealed value.
const maxKeyIDLen = 32

// Key is one key for [New]. ID may be empty, in which case [KeyID] of Secret
// is used.
type Key struct {
	ID     string
	Secret []byte
}

// Keyring holds AES-256-GCM keys by id, one of them primary. A Keyring is
// immutable after construction and safe for concurrent use. Printing or
// logging it shows key ids only.
type Keyring struct {
	primary string
	aeads   map[string]cipher.AEAD
}

// KeyID returns the default id of key: the first 8 hex characters of its
// SHA-256 digest.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// New returns a keyring holding keys; the first is primary. It fails when
// keys is empty, a key is not [KeySize] bytes, an id is invalid (1 to 32
// characters of [A-Za-z0-9._-]) or two keys share an id. The key bytes are
// copied into the cipher state; the caller may clear its slices afterwards.
func New(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("secret: new keyring: no keys")
	}
	r := &Keyring{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, k := range keys {
		id := k.ID
		if id == "" {
			id = KeyID(k.Secret)
		}
		if !validKeyID(id) {
			return nil, fmt.Errorf("secret: new keyring: key %d: invalid key id (want 1-%d characters of A-Z a-z 0-9 . _ -)", i+1, maxKeyIDLen)
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("secret: new keyring: key %q: got %d bytes, want %d", id, len(k.Secret), KeySize)
		}
		if _, dup := r.aeads[id]; dup {
			return nil, fmt.Errorf("secret: new keyring: duplicate key id %q", id)
		}
		aead, err := newAEAD(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("secret: new keyring: key %q: %w", id, err)
		}
		r.aeads[id] = aead
		if i == 0 {
			r.primary = id
		}
	}
	return r, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, errors.New("invalid AES key")
	}
	// NewGCMWithRandomNonce draws a fresh 12-byte nonce per Seal and
	// prepends it, so nonce handling cannot go wrong in this package.
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, errors.New("cannot create AES-GCM")
	}
	return aead, nil
}

func validKeyID(id string) bool {
	if id == "" || len(id) > maxKeyIDLen {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// ParseKeys parses a config value listing keys separated by commas, each
// "id:BASE64" or just "BASE64" (id defaults to [KeyID]); the first is
// primary. BASE64 is standard base64 of exactly 32 bytes. Blank entries and
// surrounding spaces are ignored. Errors name keys by position or id only.
func ParseKeys(spec string) (*Keyring, error) {
	var keys []Key
	for entry := range strings.SplitSeq(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		k, err := parseKey(entry, len(keys)+1)
		if err != nil {
			return nil, fmt.Errorf("secret: parse keys: %w", err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("secret: parse keys: no keys")
	}
	return New(keys...)
}

// parseKey parses "id:BASE64" or "BASE64"; n names the key in errors.
func parseKey(entry string, n int) (Key, error) {
	id, b64, found := strings.Cut(entry, ":")
	if !found {
		id, b64 = "", entry
	} else if !validKeyID(id) {
		return Key{}, fmt.Errorf("key %d: invalid key id", n)
	}
	name := id
	if name == "" {
		name = fmt.Sprint(n)
	}
	// The decoder's error would quote an offset into the key; report none.
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return Key{}, fmt.Errorf("key %s: invalid base64", name)
	}
	if len(raw) != KeySize {
		return Key{}, fmt.Errorf("key %s: got %d bytes, want %d", name, len(raw), KeySize)
	}
	return Key{ID: id, Secret: raw}, nil
}

// LoadKeyFile reads a key file: one key per line as for [ParseKeys]
// ("id:BASE64"), the first primary; blank lines and lines starting with '#'
// are ignored. It refuses a file that group or others may read, write or
// execute (mode must be 0600, 0400 or stricter).
func LoadKeyFile(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secret: load key file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secret: load key file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("secret: load key file %s: mode %04o allows access by group or others; run chmod 600", path, perm)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("secret: load key file: %w", err)
	}
	var keys []Key
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseKey(line, len(keys)+1)
		if err != nil {
			return nil, fmt.Errorf("secret: load key file %s: %w", path, err)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("secret: load key file %s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("secret: load key file %s: no keys", path)
	}
	return New(keys...)
}

// PrimaryID returns the id of the key that [Keyring.Seal] uses.
func (r *Keyring) PrimaryID() string { return r.primary }

// IDs returns the ids of all keys in the ring, sorted.
func (r *Keyring) IDs() []string {
	ids := make([]string, 0, len(r.aeads))
	for id := range r.aeads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// String describes the keyring by key ids only.
func (r *Keyring) String() string {
	return fmt.Sprintf("secret.Keyring{primary: %s, keys: %v}", r.primary, r.IDs())
}

// Format prints [Keyring.String] for every verb, so that %v, %+v and %#v
// cannot reach the cipher state.
func (r *Keyring) Format(f fmt.State, _ rune) { io.WriteString(f, r.String()) }

// LogValue logs key ids only.
func (r *Keyring) LogValue() slog.Value {
	return slog.GroupValue(slog.String("primary", r.primary), slog.Any("keys", r.IDs()))
}
