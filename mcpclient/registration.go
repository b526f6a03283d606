package mcpclient

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

// Field limits of a registration.
const (
	MaxURLChars   = 500
	MaxTokenChars = 500
	// MaxSnapshotNames and MaxSnapshotNameChars bound the stored discovery
	// snapshot.
	MaxSnapshotNames     = 100
	MaxSnapshotNameChars = 128
	// maxErrorChars bounds a sanitised error message.
	maxErrorChars = 500
)

var namePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9-]{0,31}$`)

// Registration is what a user asks to register.
type Registration struct {
	Name string
	URL  string
	// Token is the plaintext auth token; "" means none.
	Token string
	// Type is "general" (also ""), "web_search" or "url_fetcher".
	Type string
}

// Validate checks the fields as Add does first, without touching anything:
// callers validate before they open a store.
func (r Registration) Validate() error {
	_, err := r.normalise()
	return err
}

// normalise validates the fields and returns them in stored form: the name
// trimmed with inner whitespace turned into hyphens, the type defaulted.
// The error names the field and never echoes the token.
func (r Registration) normalise() (Registration, error) {
	r.Name = strings.Join(strings.Fields(r.Name), "-")
	if !namePattern.MatchString(r.Name) {
		return r, errors.New("name: use 1–32 letters, digits or hyphens, starting with a letter or digit")
	}
	r.URL = strings.TrimSpace(r.URL)
	switch {
	case r.URL == "":
		return r, errors.New("url: required")
	case utf8.RuneCountInString(r.URL) > MaxURLChars:
		return r, fmt.Errorf("url: at most %d characters", MaxURLChars)
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return r, errors.New("url: give an http or https URL")
	}
	if u.User != nil {
		return r, errors.New("url: credentials in the URL are not allowed; use the auth token")
	}
	if u.Fragment != "" {
		return r, errors.New("url: remove the #fragment")
	}
	r.Token = strings.TrimSpace(r.Token)
	if utf8.RuneCountInString(r.Token) > MaxTokenChars {
		return r, fmt.Errorf("token: at most %d characters", MaxTokenChars)
	}
	if strings.ContainsAny(r.Token, "\r\n") {
		return r, errors.New("token: must be one line")
	}
	t, err := ParseType(r.Type)
	if err != nil {
		return r, err
	}
	r.Type = t
	return r, nil
}

// ParseType returns the stored form of a server type: "" and "general" (and
// "none") are store.MCPGeneral.
func ParseType(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "general", "none":
		return store.MCPGeneral, nil
	case store.MCPWebSearch:
		return store.MCPWebSearch, nil
	case store.MCPURLFetcher:
		return store.MCPURLFetcher, nil
	}
	return "", fmt.Errorf("type %q: use general, web_search or url_fetcher", s)
}

// Snapshot describes a registration's stored discovery snapshot for people:
// "Discovery unknown" before any successful discovery, "None discovered"
// after one that found no tools, else the names joined by ", ".
func Snapshot(tools []string) string {
	switch {
	case tools == nil:
		return "Discovery unknown"
	case len(tools) == 0:
		return "None discovered"
	}
	return strings.Join(tools, ", ")
}

// boundSnapshot caps a discovery's names for storage: at most
// MaxSnapshotNames names of at most MaxSnapshotNameChars characters, each
// as store.PlainText keeps it (a server's name may hold a NUL or invalid
// UTF-8, which PostgreSQL would refuse; the snapshot is for people, and
// calls use the live names). The result is never nil.
func boundSnapshot(names []string) []string {
	out := make([]string, 0, min(len(names), MaxSnapshotNames))
	for _, n := range names {
		if len(out) == MaxSnapshotNames {
			break
		}
		n = store.PlainText(n)
		if utf8.RuneCountInString(n) > MaxSnapshotNameChars {
			n = string([]rune(n)[:MaxSnapshotNameChars])
		}
		out = append(out, n)
	}
	return out
}

// Origin reduces a URL to scheme, host and non-default port: what errors,
// logs and listings may show of a server's address.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host
}

// sanitise turns an error about a server into a message safe to show: the
// token (or a cut-off start of it) is replaced by [redacted], the URL (and any URL on the same host)
// reduced to its origin, and the text capped at 500 characters.
func sanitise(err error, rawURL, token string) string {
	msg := redactToken(err.Error(), token)
	if rawURL != "" {
		msg = strings.ReplaceAll(msg, rawURL, Origin(rawURL))
		msg = stripURLs(msg)
	}
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if utf8.RuneCountInString(msg) > maxErrorChars {
		msg = string([]rune(msg)[:maxErrorChars-1]) + "…"
	}
	return msg
}

// minTokenPrefix is the shortest start of a token that redactToken
// removes when the token is not there whole.
const minTokenPrefix = 4

// redactToken replaces the token with [redacted], and also any cut-off
// start of it: errors that quote a response body shorten the quote
// ("…: Bearer s3cr3t-T0KE..."), which would otherwise show most of the
// token.
func redactToken(msg, token string) string {
	if token == "" {
		return msg
	}
	least := min(len(token), minTokenPrefix)
	var b strings.Builder
	for i := 0; i < len(msg); {
		n := 0
		for n < len(token) && i+n < len(msg) && msg[i+n] == token[n] {
			n++
		}
		if n >= least {
			b.WriteString("[redacted]")
			i += n
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

var urlInText = regexp.MustCompile(`https?://[^\s"'<>]+`)

// stripURLs reduces every URL in s to its origin, so paths, queries and
// credentials of any URL an error mentions are dropped.
func stripURLs(s string) string {
	return urlInText.ReplaceAllStringFunc(s, func(u string) string {
		trimmed := strings.TrimRight(u, ".,;:)]}")
		return Origin(trimmed) + u[len(trimmed):]
	})
}
