package postgres

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted stands for a password in what RedactURL returns.
const redacted = "xxxxx"

// keywordPassword matches password=… and sslpassword=… in a
// keyword/value connection string: the value bare (up to a space) or
// single-quoted with backslash escapes, as libpq reads it.
var keywordPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:\\.|[^'\\])*'?|\S*)`)

// passwordParams are the URL query parameters that hold a secret.
var passwordParams = []string{"password", "sslpassword"}

// userInfoPassword matches the password of a URL that net/url cannot
// parse, or parses with an '@' left after the authority: everything between the
// user name's ':' and the last '@'. It may take more than the password
// (a host), never less.
var userInfoPassword = regexp.MustCompile(`(?s)^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*:).*@`)

// RedactURL returns a database URL fit for a log line or an error: its
// password, in the user info or a password or sslpassword parameter of a
// postgres:// URL, or as password=… or sslpassword=… of a keyword/value
// connection string, is replaced by "xxxxx". Everything else (host, port, database, user, options) is
// kept so that people can tell which server is meant. A string that is
// neither form is returned with any password=… redacted.
func RedactURL(s string) string {
	if !strings.Contains(s, "://") {
		return keywordPassword.ReplaceAllString(s, "${1}"+redacted)
	}
	u, err := url.Parse(s)
	if err != nil || strings.Contains(u.Opaque+u.Path+u.RawQuery+u.Fragment, "@") {
		// A password with an unescaped '/', '?' or '#' ends the authority
		// early: mask up to the last '@' instead of trusting the parse.
		s = userInfoPassword.ReplaceAllString(s, "${1}"+redacted+"@")
		return keywordPassword.ReplaceAllString(s, "${1}"+redacted)
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	u.RawQuery = redactQuery(u.RawQuery)
	return u.String()
}

// redactQuery masks the password parameters of a URL's query, whatever
// their case; a query without one is returned unchanged.
func redactQuery(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return keywordPassword.ReplaceAllString(raw, "${1}"+redacted)
	}
	changed := false
	for k := range q {
		for _, p := range passwordParams {
			if strings.EqualFold(k, p) {
				q[k] = []string{redacted}
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	return q.Encode()
}
