package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/apiclient"
	"github.com/quiverhq/quiver/internal/turnstream"
)

// Client calls one replica's HTTP API as one signed-in user: with a web
// session (cookie and CSRF token) or an API token (internal/apiclient,
// whose Base, CSRF and Token it carries). The session and the tokens live
// in the database, so At gives the same user on another replica. Methods
// named Try… return errors and may run on any goroutine; the others fail
// the client's test and run on its goroutine.
type Client struct {
	apiclient.Client
	// UserID and OrgID are who the client is signed in as.
	UserID, OrgID string

	tb testing.TB
}

// Admin signs in the first-start admin on r: with the login link the
// cluster's first replica printed at its first start, or, once that link
// was used or when none was printed (a restarted deployment), a new one
// from "quiver login-link".
func (c *Cluster) Admin(r *Replica) *Client {
	c.tb.Helper()
	c.shared.mu.Lock()
	link := c.shared.firstLogin
	c.shared.firstLogin = "" // works once
	c.shared.mu.Unlock()
	if link == "" {
		link = c.LoginLink(r, "admin", "default")
	}
	return c.SignIn(r, link)
}

// SignIn trades a one-time login link (a full URL or the path
// "/login?token=…" the API hands out) for a session on r, through POST
// /api/login, and reads the session's CSRF token.
func (c *Cluster) SignIn(r *Replica, link string) *Client {
	c.tb.Helper()
	api, me, err := apiclient.SignIn(context.Background(), r.URL, link, c.transport)
	if err != nil {
		c.tb.Fatalf("replicatest: sign in on %s: %v", r.Name, err)
	}
	return &Client{Client: *api, UserID: me.UserID, OrgID: me.OrgID, tb: c.tb}
}

// With returns the client with its failures reported on tb (a subtest,
// or another goroutine's test).
func (cl *Client) With(tb testing.TB) *Client {
	bound := *cl
	bound.tb = tb
	return &bound
}

// At returns the same user's client on replica r.
func (cl *Client) At(r *Replica) *Client {
	other := *cl
	other.Base = r.URL
	return &other
}

// NewToken creates an API token for the client's user (POST /api/tokens)
// and returns a client that sends it as a bearer token, on the same
// replica, with no session.
func (cl *Client) NewToken(label string) *Client {
	cl.tb.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	cl.JSON(http.MethodPost, "/api/tokens", map[string]string{"label": label}, http.StatusCreated, &tok)
	return &Client{Client: *cl.WithToken(tok.Token), UserID: cl.UserID, OrgID: cl.OrgID, tb: cl.tb}
}

// TryDo sends a JSON request (body nil: none) and returns the status and
// the whole response body.
func (cl *Client) TryDo(ctx context.Context, method, path string, body any) (int, []byte, error) {
	return cl.Client.Send(ctx, method, path, body) // Send is a message here
}

// Do is TryDo failing the test when the request cannot be made.
func (cl *Client) Do(method, path string, body any) (int, []byte) {
	cl.tb.Helper()
	code, out, err := cl.TryDo(context.Background(), method, path, body)
	if err != nil {
		cl.tb.Fatalf("replicatest: %s %s%s: %v", method, cl.Base, path, err)
	}
	return code, out
}

// JSON sends a request, fails the test unless the status is want, and
// decodes the response into out (when not nil).
func (cl *Client) JSON(method, path string, body any, want int, out any) {
	cl.tb.Helper()
	if err := cl.Call(context.Background(), method, path, body, want, out); err != nil {
		cl.tb.Fatalf("replicatest: %v", err)
	}
}

// NewConversation creates a conversation with the agent and returns its
// id.
func (cl *Client) NewConversation(agent string) string {
	cl.tb.Helper()
	var conv struct {
		ID string `json:"id"`
	}
	cl.JSON(http.MethodPost, "/api/conversations", map[string]string{"agent": agent}, http.StatusCreated, &conv)
	return conv.ID
}

// TryNewConversation is NewConversation returning its error.
func (cl *Client) TryNewConversation(ctx context.Context, agent string) (string, error) {
	code, raw, err := cl.TryDo(ctx, http.MethodPost, "/api/conversations", map[string]string{"agent": agent})
	if err != nil {
		return "", err
	}
	var conv struct {
		ID string `json:"id"`
	}
	if code != http.StatusCreated || json.Unmarshal(raw, &conv) != nil || conv.ID == "" {
		return "", fmt.Errorf("create conversation: %d %s", code, raw)
	}
	return conv.ID, nil
}

// Message is a stored transcript entry as GET …/messages lists it.
type Message struct {
	Seq      int64  `json:"seq"`
	TurnID   string `json:"turn_id"`
	Role     string `json:"role"`
	Content  string `json:"content"`
	ToolName string `json:"tool_name"`
}

// Messages returns the conversation's transcript (its latest page).
func (cl *Client) Messages(conv string) []Message {
	cl.tb.Helper()
	var out struct {
		Messages []Message `json:"messages"`
	}
	cl.JSON(http.MethodGet, "/api/conversations/"+conv+"/messages", nil, http.StatusOK, &out)
	return out.Messages
}

// Send sends a message in the conversation and reads the turn's stream
// to its end; a turn that does not end with a done event, or ends with
// an error event, fails the test.
func (cl *Client) Send(conv, text string) Turn {
	cl.tb.Helper()
	t, err := cl.TrySend(context.Background(), conv, text)
	if err != nil {
		cl.tb.Fatalf("replicatest: send on %s: %v", cl.Base, err)
	}
	return t
}

// TrySend is Send returning an error instead: the request's, a stream
// that is not one, an error event, or a stream that ends without done.
func (cl *Client) TrySend(ctx context.Context, conv, text string) (Turn, error) {
	s, err := cl.Stream(ctx, http.MethodPost, "/api/conversations/"+conv+"/messages", map[string]string{"message": text}, nil)
	if err != nil {
		return Turn{}, err
	}
	defer s.Close()
	return s.ReadTurn()
}

// Stream sends a request whose answer is an event stream (a message, an
// answer, GET …/events) with the extra headers (Last-Event-ID, …) and
// returns the open stream. A status other than 200 or a body that is not
// text/event-stream is an error quoting the body.
func (cl *Client) Stream(ctx context.Context, method, path string, body any, header http.Header) (*Stream, error) {
	req, err := cl.Request(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := cl.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, &StatusError{Code: resp.StatusCode, Body: string(raw)}
	}
	return turnstream.New(resp), nil
}

// StatusError is an answer that was not the event stream asked for.
type StatusError struct {
	Code int
	Body string
}

// Error says the status and quotes the body.
func (e *StatusError) Error() string { return fmt.Sprintf("status %d: %s", e.Code, e.Body) }
