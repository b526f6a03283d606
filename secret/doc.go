// Package secret encrypts small secrets, such as MCP auth tokens, for storage
// at rest, and carries them in memory without leaking them into logs or JSON.
//
// A [Keyring] holds one or more AES-256 keys, each named by a short key id; one
// key is primary. [Keyring.Seal] encrypts with AES-256-GCM under the primary key
// and a random 96-bit nonce, and returns text of the form
//
//	v1:<keyid>:<base64(nonce|ciphertext|tag)>
//
// The additional data passed to Seal and Open binds a ciphertext to the row
// that stores it (for example "mcp_server/<org>/<id>/token"): the same
// ciphertext copied to another row fails to open. Open picks the key by the id
// in the text, so old ciphertexts keep opening while their key stays in the
// ring, and [Keyring.Rotate] re-encrypts them under the primary key.
//
// Errors from this package never contain key material, plaintext or a whole
// ciphertext. [Redacted] prints only "set" or "not set".
package secret

import "errors"

// Sentinel errors returned (wrapped) by [Keyring.Open] and [Keyring.Rotate];
// test for them with errors.Is.
var (
	// ErrMalformed reports text that is not a well-formed sealed value.
	ErrMalformed = errors.New("malformed sealed value")
	// ErrUnknownKey reports a sealed value naming a key id that is not in
	// the keyring.
	ErrUnknownKey = errors.New("unknown key id")
	// ErrDecrypt reports a sealed value that failed authentication: it was
	// tampered with, or it is bound to different additional data (another
	// row), or it was sealed under a different key with the same id.
	ErrDecrypt = errors.New("decryption failed")
)
