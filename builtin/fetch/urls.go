package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/quiverhq/quiver/tool"
)

// parsePageURL accepts an absolute http(s) URL with a host and no
// credentials, and drops its fragment, which never reaches a server.
func parsePageURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("url is not a valid URL: %s", redactString(raw))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("url must start with http:// or https://")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("url has no host")
	case u.User != nil:
		return nil, errors.New("url must not carry credentials (user:password@)")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// redact prints u without credentials, query or fragment: those may hold
// tokens the answer must not repeat.
func redact(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}

// redactString is redact for a URL held as a string; what does not parse is
// cut at the first '?' or '#'.
func redactString(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		return redact(u)
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	return oneLine(raw)
}

// queryLike matches the query or userinfo part of any URL quoted inside an
// error message (a redirect target, say).
var queryLike = regexp.MustCompile(`\?[^\s"']*|//[^/\s"'@]*@`)

// requestError turns a client failure into one line the model can read:
// the operation and redacted URL, then the cause. A refusal by the guarded
// client ("blocked: …") leads the line. A cancelled turn is an
// infrastructure error, not the page's fault.
func requestError(ctx context.Context, u *url.URL, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return tool.Infra(fmt.Errorf("fetch %s: %w", redact(u), ctx.Err()))
	}
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	msg := oneLine(queryLike.ReplaceAllString(cause.Error(), "?…"))
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "timed out"
	}
	if strings.HasPrefix(msg, "blocked:") {
		return &fetchError{msg: fmt.Sprintf("%s (fetch %s)", msg, redact(u)), err: cause}
	}
	return &fetchError{msg: fmt.Sprintf("fetch %s: %s", redact(u), msg), err: cause}
}

// fetchError carries a cleaned message while keeping the cause for
// errors.Is and errors.As.
type fetchError struct {
	msg string
	err error
}

func (e *fetchError) Error() string { return e.msg }
func (e *fetchError) Unwrap() error { return e.err }
