package mcpclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/secret"
)

// errAbandoned reports a request of a connect attempt already given up.
var errAbandoned = errors.New("connect attempt given up")

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
	// overCap is set when a response body went past the guarded client's
	// byte cap. The SDK reports such a body as a stream that ended early;
	// Conn.Call uses this to say what happened.
	overCap atomic.Bool
	// abandoned is set when the connect attempt using this transport was
	// given up; every later request fails at once.
	abandoned atomic.Bool
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
	if t.abandoned.Load() {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errAbandoned
	}
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
	resp.Body = &capWatch{ReadCloser: resp.Body, hit: &t.overCap}
	return resp, nil
}

// capWatch notes a read that failed on the byte cap.
type capWatch struct {
	io.ReadCloser
	hit *atomic.Bool
}

func (b *capWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, netguard.ErrTooLarge) {
		b.hit.Store(true)
	}
	return n, err
}
