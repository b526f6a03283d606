package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/secret"
)

// Probed is a connection made by Probe: calls are bounded by the call
// timeout and their errors sanitised, as a registered server's are.
type Probed struct {
	*Conn
	url, token string
	timeout    time.Duration
}

// Call calls one tool within the call timeout; an error is sanitised (no
// token, URLs reduced to their origin).
func (p *Probed) Call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	cctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	res, err := p.Conn.Call(cctx, name, args)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("no answer within %s", p.timeout)
		}
		return nil, errors.New(sanitise(err, p.url, p.token))
	}
	return res, nil
}

// Probe connects to a URL without registering it (the policy of the
// deployment's mode still applies: a probe belongs to no organisation) and
// returns the live connection; the caller closes it.
func (s *Service) Probe(ctx context.Context, rawURL, token string) (*Probed, error) {
	r, err := Registration{Name: "probe", URL: rawURL, Token: token}.normalise()
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	n := s.deployment()
	if err := n.checkURL(ctx, r.URL); err != nil {
		return nil, err
	}
	conn, err := n.dialer.dial(ctx, Target{URL: r.URL, Token: secret.Redacted(r.Token)}, s.limits.ConnectTimeout)
	if err != nil {
		return nil, refusef("could not connect to %s: %s", Origin(r.URL), sanitise(err, r.URL, r.Token))
	}
	return &Probed{Conn: conn, url: r.URL, token: r.Token, timeout: s.limits.CallTimeout}, nil
}
