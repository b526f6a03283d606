package secret

import (
	"fmt"
	"io"
	"log/slog"
)

// Redacted carries a secret, such as an auth token, in memory. Every way of
// printing it — fmt (all verbs, including %#v), encoding/json,
// encoding.TextMarshaler and log/slog — shows only "set" or "not set"
// (the empty string). Call [Redacted.Reveal] at the one place that needs the
// value, such as the outbound transport. One gap: encoding/json writes map
// keys of string kind verbatim, so never use a Redacted as a map key.
type Redacted string

// Reveal returns the secret itself.
func (r Redacted) Reveal() string { return string(r) }

// IsSet reports whether the secret is non-empty.
func (r Redacted) IsSet() bool { return r != "" }

// String returns "set" or "not set".
func (r Redacted) String() string {
	if r.IsSet() {
		return "set"
	}
	return "not set"
}

// GoString returns the same as [Redacted.String].
func (r Redacted) GoString() string { return r.String() }

// Format writes [Redacted.String] for every verb, so that no fmt verb
// (%x, %q, %d, …) can print the value.
func (r Redacted) Format(f fmt.State, _ rune) { io.WriteString(f, r.String()) }

// MarshalJSON encodes "set" or "not set" as a JSON string.
func (r Redacted) MarshalJSON() ([]byte, error) { return []byte(`"` + r.String() + `"`), nil }

// MarshalText encodes "set" or "not set" for text-based encoders.
func (r Redacted) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// LogValue logs "set" or "not set".
func (r Redacted) LogValue() slog.Value { return slog.StringValue(r.String()) }
