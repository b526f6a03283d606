package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// DuckDuckGoURL is DuckDuckGo's HTML endpoint, which needs no key.
const DuckDuckGoURL = "https://html.duckduckgo.com/html/"

// MaxQueryRunes caps the query sent to DuckDuckGo.
const MaxQueryRunes = 500

// DuckDuckGo searches DuckDuckGo's HTML endpoint and parses its result
// page. It answers text only. A bot-check page, even with status 200, is
// Challenged; its genuine no-results page is an empty answer; a results
// page whose blocks no longer parse is Malformed.
type DuckDuckGo struct {
	base      string
	client    *http.Client
	now       func() time.Time
	userAgent string
}

// NewDuckDuckGo returns the engine. An empty base means DuckDuckGoURL; an
// empty userAgent means a plain browser-like one; a nil client means
// http.DefaultClient; a nil now means clock.Now.
func NewDuckDuckGo(base, userAgent string, c *http.Client, now func() time.Time) *DuckDuckGo {
	if base == "" {
		base = DuckDuckGoURL
	}
	if userAgent == "" {
		userAgent = "Mozilla/5.0 (compatible; Quiver web_search)"
	}
	return &DuckDuckGo{base: base, client: orDefault(c), now: orNow(now), userAgent: userAgent}
}

// Name returns "duckduckgo".
func (d *DuckDuckGo) Name() string { return "duckduckgo" }

// Categories returns text.
func (d *DuckDuckGo) Categories() []string { return []string{Text} }

// Search fetches and parses the result page for q. Only Accept and
// User-Agent are sent: no cookies, no credentials.
func (d *DuckDuckGo) Search(ctx context.Context, q Query) ([]Result, error) {
	text := q.Text
	if utf8.RuneCountInString(text) > MaxQueryRunes {
		text = string([]rune(text)[:MaxQueryRunes])
	}
	sep := "?"
	if strings.Contains(d.base, "?") {
		sep = "&"
	}
	req, err := http.NewRequest(http.MethodGet, d.base+sep+url.Values{"q": {text}}.Encode(), nil)
	if err != nil {
		return nil, engineErr(Failed, "build request: %w", err)
	}
	req.Header.Set("Accept", "text/html")
	req.Header.Set("User-Agent", d.userAgent)
	body, err := get(ctx, d.client, req, d.now)
	if err != nil {
		return nil, err
	}
	res, err := ParseDuckDuckGo(body)
	if err != nil {
		return nil, err
	}
	if len(res) > q.Count {
		res = res[:q.Count]
	}
	return res, nil
}
