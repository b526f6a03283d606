package secret

import (
	"encoding/base64"
	"fmt"
	"strings"
)

const (
	version = "v1"
	// gcmOverhead is the random nonce (12 bytes) plus the tag (16 bytes).
	gcmOverhead = 12 + 16
	// maxSealedLen bounds the text Open accepts; tokens are far shorter.
	maxSealedLen = 1 << 20
)

// b64 is strict so that each ciphertext has exactly one text form.
var b64 = base64.StdEncoding.Strict()

// Seal encrypts plaintext under the primary key with a random nonce and binds
// it to aad, which must be passed again to [Keyring.Open]. The result is
// "v1:<keyid>:<base64>"; sealing the same plaintext twice gives different
// text. The nonce comes from crypto/rand, which cannot fail (since Go 1.24
// it aborts the program instead); the error result is kept so that a future
// key source (a KMS) can report failure without an API change.
func (r *Keyring) Seal(plaintext, aad []byte) (string, error) {
	ct := r.aeads[r.primary].Seal(nil, nil, plaintext, aad)
	return version + ":" + r.primary + ":" + b64.EncodeToString(ct), nil
}

// parse splits sealed into key id and raw ciphertext.
func parse(sealed string) (id string, ct []byte, err error) {
	if len(sealed) > maxSealedLen {
		return "", nil, fmt.Errorf("%w: too long", ErrMalformed)
	}
	v, rest, ok := strings.Cut(sealed, ":")
	if !ok || v != version {
		return "", nil, fmt.Errorf("%w: want prefix %q", ErrMalformed, version+":")
	}
	id, body, ok := strings.Cut(rest, ":")
	if !ok || !validKeyID(id) {
		return "", nil, fmt.Errorf("%w: bad key id", ErrMalformed)
	}
	ct, err = b64.DecodeString(body)
	if err != nil {
		return "", nil, fmt.Errorf("%w: bad base64", ErrMalformed)
	}
	if len(ct) < gcmOverhead {
		return "", nil, fmt.Errorf("%w: too short", ErrMalformed)
	}
	return id, ct, nil
}

// Open decrypts a value from [Keyring.Seal] with the key its id names,
// checking it against aad. Errors wrap [ErrMalformed], [ErrUnknownKey] or
// [ErrDecrypt] and name at most the key id.
func (r *Keyring) Open(sealed string, aad []byte) ([]byte, error) {
	_, pt, err := r.open(sealed, aad)
	return pt, err
}

func (r *Keyring) open(sealed string, aad []byte) (id string, pt []byte, err error) {
	id, ct, err := parse(sealed)
	if err != nil {
		return "", nil, fmt.Errorf("secret: open: %w", err)
	}
	aead, ok := r.aeads[id]
	if !ok {
		return "", nil, fmt.Errorf("secret: open: %w %q", ErrUnknownKey, id)
	}
	pt, err = aead.Open(nil, nil, ct, aad)
	if err != nil {
		return "", nil, fmt.Errorf("secret: open: key %q: %w", id, ErrDecrypt)
	}
	return id, pt, nil
}

// Rotate opens sealed with the key it names and returns it sealed under the
// primary key with the same aad. A value already under the primary key is
// verified and returned unchanged. Errors are those of [Keyring.Open].
func (r *Keyring) Rotate(sealed string, aad []byte) (string, error) {
	id, pt, err := r.open(sealed, aad)
	if err != nil {
		return "", fmt.Errorf("secret: rotate: %w", err)
	}
	defer clear(pt)
	if id == r.primary {
		return sealed, nil
	}
	s, err := r.Seal(pt, aad)
	if err != nil {
		return "", fmt.Errorf("secret: rotate: %w", err)
	}
	return s, nil
}

// NeedsRotation reports whether sealed names a key other than the primary.
// It does not decrypt. Malformed text reports true, so that a rotation pass
// visits it and [Keyring.Rotate] reports the error.
func (r *Keyring) NeedsRotation(sealed string) bool {
	id, _, err := parse(sealed)
	return err != nil || id != r.primary
}

// SealedKeyID returns the id of the key that sealed names, without
// decrypting, for messages that must say which key a value needs. Text
// that is not a well-formed sealed value gives an error wrapping
// [ErrMalformed].
func SealedKeyID(sealed string) (string, error) {
	id, _, err := parse(sealed)
	if err != nil {
		return "", fmt.Errorf("secret: sealed key id: %w", err)
	}
	return id, nil
}
