package mcpclient

import (
	"errors"
	"fmt"
	"io"
	"mime"
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
	// maxBytes caps a response body, or each event of an event stream.
	maxBytes int64
	// overCap is set when a response went past maxBytes. The SDK reports
	// such a body as a stream that ended early; Conn.Call uses this to say
	// what happened.
	overCap atomic.Bool
	// abandoned is set when the connect attempt using this transport was
	// given up; every later request fails at once.
	abandoned atomic.Bool
	// otherOrigin is set when a request to another origin was refused.
	// The SDK does not always pass that error on: see dialer.attempt.
	otherOrigin atomic.Bool
}

// httpClientFor returns the client one connection uses: guarded, bound to
// the origin of endpoint, bearer token on every request.
func httpClientFor(guarded *http.Client, endpoint *url.URL, token secret.Redacted, maxBytes int64) *http.Client {
	return &http.Client{
		Transport: &originTransport{scheme: endpoint.Scheme, host: endpoint.Host, token: token, base: guarded, maxBytes: maxBytes},
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
		t.otherOrigin.Store(true)
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
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	body := &capBody{rc: resp.Body, max: t.maxBytes, perEvent: mt == "text/event-stream", hit: &t.overCap}
	if tail := tailOf(req.Context()); tail != nil {
		tail.opened()
		body.onClose = tail.closed
	}
	resp.Body = body
	return resp, nil
}

// capBody fails a read with netguard.ErrTooLarge once more than max bytes
// came: of the whole body, or with perEvent of one server-sent event (the
// count restarts at each blank line). It notes the failure in hit.
type capBody struct {
	rc       io.ReadCloser
	max      int64
	perEvent bool
	hit      *atomic.Bool

	n    int64
	prev byte // last byte read other than '\r'
	// onClose, when set, runs after the first Close.
	onClose func()
	closed  atomic.Bool
}

func (b *capBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	for i, c := range p[:n] {
		b.n++
		if b.n > b.max {
			b.hit.Store(true)
			return i, netguard.ErrTooLarge
		}
		if c == '\r' {
			continue
		}
		if b.perEvent && c == '\n' && b.prev == '\n' {
			b.n = 0
		}
		b.prev = c
	}
	return n, err
}

// Close closes the body; the first Close runs onClose.
func (b *capBody) Close() error {
	err := b.rc.Close()
	if b.closed.CompareAndSwap(false, true) && b.onClose != nil {
		b.onClose()
	}
	return err
}
