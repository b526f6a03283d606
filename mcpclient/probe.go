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
// returns the live connection, which is not pooled; the caller closes it.
// Refusals (a field, the policy, a failed connect) are *Error.
func (p *Pool) Probe(ctx context.Context, rawURL, token string) (*Probed, error) {
	r, err := Registration{Name: "probe", URL: rawURL, Token: token}.normalise()
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	conn, err := p.dialChecked(ctx, p.deployment(), r.URL, r.Token)
	if err != nil {
		return nil, err
	}
	return &Probed{Conn: conn, url: r.URL, token: r.Token, timeout: p.limits.CallTimeout}, nil
}

// dialChecked checks a URL against n's policy, then connects to it and
// discovers its tools, outside the pool: the connection test of a
// registration or a probe. A refusal is an *Error with a sanitised
// message. The caller closes the connection.
func (p *Pool) dialChecked(ctx context.Context, n *network, rawURL, token string) (*Conn, error) {
	if err := n.checkURL(ctx, rawURL); err != nil {
		return nil, err
	}
	conn, err := n.dialer.dial(ctx, Target{URL: rawURL, Token: secret.Redacted(token)}, p.limits.ConnectTimeout)
	if err != nil {
		return nil, refusef("could not connect to %s: %s", Origin(rawURL), sanitise(err, rawURL, token))
	}
	return conn, nil
}
