// Package apiclient calls Quiver's HTTP API (quiver serve) as one user,
// with a web session (cookie and CSRF token) or an API token: how quiver
// bench (internal/bench) and the replica tests (internal/replicatest)
// drive the servers they start. It returns errors; the tests wrap it with
// their failing helpers.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
)

// Client is one user's client of one server. It is safe for concurrent
// use; a copy with another Base is the same user on another replica of
// the same deployment (sessions and tokens live in the database).
type Client struct {
	// Base is the server's base URL ("http://127.0.0.1:PORT").
	Base string
	// CSRF is the session's anti-forgery token ("" for a token client).
	CSRF string
	// Token is the API token of a token client ("" for a session).
	Token string
	// HTTP sends the requests (a session's holds its cookie jar).
	HTTP *http.Client
}

// Me is who a session is signed in as (GET /api/me).
type Me struct {
	UserID string `json:"user_id"`
	OrgID  string `json:"org_id"`
	CSRF   string `json:"csrf_token"`
}

// SignIn trades a one-time login link (a full URL, or the path
// "/login?token=…" the API hands out) for a session on base through POST
// /api/login, its requests sent through rt, and reads who it is and its
// CSRF token from GET /api/me.
func SignIn(ctx context.Context, base, link string, rt http.RoundTripper) (*Client, Me, error) {
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" {
		return nil, Me{}, fmt.Errorf("%q is not a login link", link)
	}
	jar, _ := cookiejar.New(nil)
	cl := &Client{Base: base, HTTP: &http.Client{Jar: jar, Transport: rt}}
	if err := cl.Call(ctx, http.MethodPost, "/api/login", map[string]string{"token": u.Query().Get("token")}, http.StatusOK, nil); err != nil {
		return nil, Me{}, fmt.Errorf("sign in: %w", err)
	}
	var me Me
	if err := cl.Call(ctx, http.MethodGet, "/api/me", nil, http.StatusOK, &me); err != nil {
		return nil, Me{}, fmt.Errorf("sign in: %w", err)
	}
	if me.CSRF == "" {
		return nil, Me{}, fmt.Errorf("sign in: /api/me on %s gave no CSRF token", base)
	}
	cl.CSRF = me.CSRF
	return cl, me, nil
}

// WithToken is a client of the same server sending token as a bearer
// token, with no session, over the same transport.
func (cl *Client) WithToken(token string) *Client {
	return &Client{Base: cl.Base, Token: token, HTTP: &http.Client{Transport: cl.HTTP.Transport}}
}

// Request builds a request to path with the client's credentials and, when
// body is not nil, body as JSON.
func (cl *Client) Request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode the %s %s body: %w", method, path, err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.Base+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.CSRF != "" {
		req.Header.Set("X-CSRF-Token", cl.CSRF)
	}
	if cl.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cl.Token)
	}
	return req, nil
}

// Send sends a JSON request (body nil: none) and returns the status and
// the whole response body.
func (cl *Client) Send(ctx context.Context, method, path string, body any) (int, []byte, error) {
	req, err := cl.Request(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	resp, err := cl.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp.StatusCode, raw, nil
}

// Call sends a JSON request and decodes the answer into out (when not
// nil); a status other than want is an error quoting the body.
func (cl *Client) Call(ctx context.Context, method, path string, body any, want int, out any) error {
	code, raw, err := cl.Send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("%s %s%s: status %d, want %d: %s", method, cl.Base, path, code, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode %s: %w", method, path, raw, err)
		}
	}
	return nil
}
