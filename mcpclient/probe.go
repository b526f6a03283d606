package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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

// ProbeReport is what a probe found, as "quiver mcp probe --json" prints
// it: the server's identity and transport, its tools in listed order and
// the outcome of each call made.
type ProbeReport struct {
	Server    mcp.Implementation `json:"server"`
	Transport string             `json:"transport"`
	Tools     []ProbeTool        `json:"tools"`
	Calls     []ProbeCall        `json:"calls,omitempty"`
}

// ProbeTool is one listed tool.
type ProbeTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ProbeCall is one call to make (Tool and Arguments, a JSON object) and,
// once made, its outcome: Content is the rendered result, or the
// sanitised error with IsError set.
type ProbeCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	IsError   bool            `json:"is_error"`
	Content   string          `json:"content"`
}

// Failed reports whether any call ended in an error, the transport's or
// the tool's.
func (r ProbeReport) Failed() bool {
	return slices.ContainsFunc(r.Calls, func(c ProbeCall) bool { return c.IsError })
}

// Report lists the probed server's tools and makes calls, in order: the
// calls given, then, when all is set, every listed tool once with
// arguments generated from its input schema (required properties only:
// the default, const or first enum value when the schema gives one, else
// a plain value of the property's type). A call's failure is recorded in
// its ProbeCall, never returned; calls is not modified.
func (p *Probed) Report(ctx context.Context, calls []ProbeCall, all bool) ProbeReport {
	out := ProbeReport{Server: p.Server(), Transport: p.Transport()}
	calls = slices.Clone(calls)
	for _, t := range p.Tools() {
		out.Tools = append(out.Tools, ProbeTool{Name: t.Name, Description: t.Description})
		if all {
			calls = append(calls, ProbeCall{Tool: t.Name, Arguments: sampleArgs(t.InputSchema)})
		}
	}
	for i, c := range calls {
		res, err := p.Call(ctx, c.Tool, c.Arguments)
		if err != nil {
			calls[i].IsError, calls[i].Content = true, err.Error()
			continue
		}
		r := Render(c.Tool, res)
		calls[i].IsError, calls[i].Content = r.IsError, r.Content
	}
	out.Calls = calls
	return out
}
