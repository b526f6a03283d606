package netguard

import (
	"io"
	"net/http"
)

// guardTransport checks every request URL (the first and each redirect),
// sets the User-Agent and caps the response body.
type guardTransport struct {
	c    *Client
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.c.checkRequestURL(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", t.c.cfg.UserAgent)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.c.cfg.MaxBytes}
	return resp, nil
}

// cappedBody delivers at most left bytes and then fails with ErrTooLarge if
// the body has more; a body of exactly the cap ends with io.EOF as usual.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		n = int(b.left)
		b.left = -1
		return n, ErrTooLarge
	}
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
