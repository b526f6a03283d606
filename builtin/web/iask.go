package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// IAskAnswer is what an IAsk backend returns: a written answer and the
// sources it cites.
type IAskAnswer struct {
	Answer  string
	Sources []IAskSource
}

// IAskSource is one cited page.
type IAskSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// IAskBackend serves IAsk queries. IAskHTTP is the HTTP backend; a tool of
// a registered MCP server can back it too, by implementing Ask over a
// tools/call. Ask returns an *EngineError where it can classify a failure.
type IAskBackend interface {
	Ask(ctx context.Context, query string) (IAskAnswer, error)
}

// IAsk is the last-resort text engine: one answer from IAsk plus the
// sources it cites, as results.
type IAsk struct {
	backend IAskBackend
}

// NewIAsk returns the engine over backend, which must not be nil.
func NewIAsk(backend IAskBackend) *IAsk { return &IAsk{backend: backend} }

// Name returns "iask".
func (e *IAsk) Name() string { return "iask" }

// Categories returns text.
func (e *IAsk) Categories() []string { return []string{Text} }

// Search asks the backend. The answer comes first, as a result whose
// snippet is the answer text and whose URL is its first source.
func (e *IAsk) Search(ctx context.Context, q Query) ([]Result, error) {
	a, err := e.backend.Ask(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	var out []Result
	answer := strings.TrimSpace(a.Answer)
	if answer != "" && len(a.Sources) > 0 {
		out = append(out, Result{Title: "IAsk answer", URL: a.Sources[0].URL, Snippet: answer, Source: "iask"})
	}
	for _, s := range a.Sources {
		out = append(out, Result{Title: s.Title, URL: s.URL, Source: "iask"})
	}
	if len(out) > q.Count {
		out = out[:q.Count]
	}
	return out, nil
}

// IAskHTTP asks an IAsk-compatible HTTP endpoint: GET base?q=… with the key
// as a bearer token, answered by {"answer": "…", "sources": [{"title",
// "url"}]}.
type IAskHTTP struct {
	base   string
	key    string
	client *http.Client
	now    func() time.Time
}

// NewIAskHTTP returns the HTTP backend. A nil client means
// http.DefaultClient; a nil now means clock.Now.
func NewIAskHTTP(base, key string, c *http.Client, now func() time.Time) *IAskHTTP {
	return &IAskHTTP{base: base, key: key, client: orDefault(c), now: orNow(now)}
}

// Ask implements IAskBackend.
func (h *IAskHTTP) Ask(ctx context.Context, query string) (IAskAnswer, error) {
	sep := "?"
	if strings.Contains(h.base, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(http.MethodGet, h.base+sep+url.Values{"q": {query}}.Encode(), nil)
	if err != nil {
		return IAskAnswer{}, engineErr(Failed, "build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if h.key != "" {
		req.Header.Set("Authorization", "Bearer "+h.key)
	}
	body, err := get(ctx, h.client, req, h.now)
	if err != nil {
		return IAskAnswer{}, err
	}
	var r struct {
		Answer  *string      `json:"answer"`
		Sources []IAskSource `json:"sources"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Answer == nil {
		return IAskAnswer{}, engineErr(Malformed, "not an IAsk answer")
	}
	return IAskAnswer{Answer: *r.Answer, Sources: r.Sources}, nil
}
