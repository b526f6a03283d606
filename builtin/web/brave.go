package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quiverhq/quiver/internal/clock"
)

// BraveURL is the Brave Search API root; the endpoints are under it.
const BraveURL = "https://api.search.brave.com/res/v1"

// Brave searches with the Brave Search API: web results for text, and its
// image, video and news endpoints. The key travels in the
// X-Subscription-Token header, never in a URL.
type Brave struct {
	key    string
	base   string
	client *http.Client
	now    func() time.Time
}

// NewBrave returns the Brave engine. An empty base means BraveURL; a nil
// client means http.DefaultClient; a nil now means clock.Now.
func NewBrave(key, base string, c *http.Client, now func() time.Time) *Brave {
	if base == "" {
		base = BraveURL
	}
	return &Brave{key: key, base: strings.TrimRight(base, "/"), client: orDefault(c), now: orNow(now)}
}

// Name returns "brave".
func (b *Brave) Name() string { return "brave" }

// Categories returns text, image, video and news.
func (b *Brave) Categories() []string { return []string{Text, Image, Video, News} }

var braveEndpoint = map[string]string{Text: "/web/search", Image: "/images/search", Video: "/videos/search", News: "/news/search"}

// Search queries the endpoint of q's category.
func (b *Brave) Search(ctx context.Context, q Query) ([]Result, error) {
	ep, ok := braveEndpoint[category(q)]
	if !ok {
		return nil, engineErr(Failed, "category %q not served", q.Category)
	}
	v := url.Values{"q": {q.Text}, "count": {strconv.Itoa(q.Count)}, "safesearch": {"moderate"}}
	if category(q) == Image {
		v.Set("safesearch", "strict") // the image endpoint accepts only off and strict
	}
	req, err := http.NewRequest(http.MethodGet, b.base+ep+"?"+v.Encode(), nil)
	if err != nil {
		return nil, engineErr(Failed, "build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	body, err := getWith(ctx, b.client, req, b.now, braveReset)
	if err != nil {
		return nil, err
	}
	return decodeBrave(body, category(q))
}

// braveReset reads how long a rate-limited Brave asks us to wait when it
// sends no Retry-After. X-RateLimit-Reset gives, for each quota window
// (per second first, per month last), the seconds until it resets, and
// X-RateLimit-Remaining the requests left in each. The wait is until the
// last exhausted window resets, or, when none shows exhausted, the
// soonest reset; at least a second and at most MaxCooldown. Zero, for the
// chain's default, when the reset header is absent or unreadable.
func braveReset(h http.Header) time.Duration {
	resets, ok := headerInts(h.Get("X-RateLimit-Reset"))
	if !ok {
		return 0
	}
	wait := slices.Min(resets)
	if left, ok := headerInts(h.Get("X-RateLimit-Remaining")); ok && len(left) == len(resets) {
		exhausted := int64(-1)
		for i, n := range left {
			if n == 0 {
				exhausted = max(exhausted, resets[i])
			}
		}
		if exhausted >= 0 {
			wait = exhausted
		}
	}
	return max(seconds(wait), time.Second)
}

// headerInts parses a comma-separated list of non-negative integers
// ("1, 1419704"); ok is false when the list is empty or any value is not
// one.
func headerInts(v string) (nums []int64, ok bool) {
	if strings.TrimSpace(v) == "" {
		return nil, false
	}
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 0 {
			return nil, false
		}
		nums = append(nums, n)
	}
	return nums, true
}

// braveResult is the union of the fields the four endpoints give a hit.
type braveResult struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Age         string `json:"age"`
	PageAge     string `json:"page_age"`
	Source      string `json:"source"` // images: the host of the page
	Properties  struct {
		URL string `json:"url"` // images: the full-size image
	} `json:"properties"`
	Video struct {
		Duration string `json:"duration"`
		Creator  string `json:"creator"`
	} `json:"video"`
}

// braveResponse covers the web endpoint ({"web":{"results":[…]}}) and the
// vertical ones ({"type":"images","results":[…]}).
type braveResponse struct {
	Type string `json:"type"`
	Web  *struct {
		Results []braveResult `json:"results"`
	} `json:"web"`
	Results []braveResult `json:"results"`
}

func decodeBrave(body []byte, cat string) ([]Result, error) {
	var r braveResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, engineErr(Malformed, "decode: %w", err)
	}
	hits := r.Results
	if cat == Text {
		if r.Type != "search" && r.Web == nil {
			return nil, engineErr(Malformed, "not a web search answer")
		}
		if r.Web != nil {
			hits = r.Web.Results
		}
	}
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		out = append(out, braveHit(h, cat))
	}
	return out, nil
}

func braveHit(h braveResult, cat string) Result {
	res := Result{Title: plainText(h.Title), URL: h.URL, Snippet: plainText(h.Description), Source: "brave", Published: parseDate(h.PageAge)}
	switch cat {
	case Image:
		res.Snippet = joinNonEmpty(" · ", "image: "+h.Properties.URL, h.Source)
		if h.Properties.URL == "" {
			res.Snippet = h.Source
		}
	case Video:
		res.Snippet = joinNonEmpty(" · ", plainText(h.Description), h.Video.Creator, h.Video.Duration)
	}
	if res.Published.IsZero() && h.Age != "" && cat == News {
		res.Snippet = joinNonEmpty(" · ", res.Snippet, h.Age)
	}
	return res
}

func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// parseDate reads the dates engines give (RFC 3339, with or without zone,
// or a bare date); zero when it reads none.
func parseDate(s string) time.Time {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func category(q Query) string {
	if q.Category == "" {
		return Text
	}
	return q.Category
}

func orDefault(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

func orNow(now func() time.Time) func() time.Time {
	if now == nil {
		return clock.Now
	}
	return now
}
