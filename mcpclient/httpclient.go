package mcpclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/quiverhq/quiver/secret"
)

// errOtherOrigin reports a request the SDK tried to send to an origin other
// than the registered one (an SSE endpoint event pointing elsewhere).
var errOtherOrigin = errors.New("request to another origin refused")

// originTransport sends requests only to the registered origin, adding the
// bearer token, and refuses redirects (the guarded client underneath is set
// not to follow them; a 3xx becomes an error here).
type originTransport struct {
	scheme, host string
	token        secret.Redacted
	base         *http.Client
}

// httpClientFor returns the client one connection uses: guarded, bound to
// the origin of endpoint, bearer token on every request.
func httpClientFor(guarded *http.Client, endpoint *url.URL, token secret.Redacted) *http.Client {
	return &http.Client{
		Transport: &originTransport{scheme: endpoint.Scheme, host: endpoint.Host, token: token, base: guarded},
		// Redirects are refused below; never follow one here either.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// RoundTrip implements http.RoundTripper.
func (t *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != t.scheme || req.URL.Host != t.host || req.URL.User != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errOtherOrigin
	}
	if t.token.IsSet() {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.token.Reveal())
	}
	resp, err := t.base.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		resp.Body.Close()
		return nil, fmt.Errorf("server answered with a redirect (%d); redirects are refused: register the final URL", resp.StatusCode)
	}
	return resp, nil
}
