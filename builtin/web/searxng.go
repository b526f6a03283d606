package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"strings"
	"sync"
	"time"
)

// DefaultHealthTTL is how long a SearXNG health probe's answer is reused.
const DefaultHealthTTL = 60 * time.Second

// SearXNG searches a SearXNG instance through its JSON API
// (/search?format=json). It answers every category, mapping ours to
// SearXNG's (papers → science, code → it). Before use its /healthz probe
// must pass; the probe's answer, failure included, is cached for a TTL,
// per process (harmless with several replicas: each probes for itself).
type SearXNG struct {
	base   string
	client *http.Client
	now    func() time.Time
	ttl    time.Duration
	probe  time.Duration

	mu      sync.Mutex
	checked time.Time
	healthy bool
}

// NewSearXNG returns the engine for the instance at base. A zero ttl means
// DefaultHealthTTL; probe bounds one health check (zero means 3 s); a nil
// client means http.DefaultClient; a nil now means clock.Now.
func NewSearXNG(base string, c *http.Client, now func() time.Time, ttl, probe time.Duration) *SearXNG {
	if ttl <= 0 {
		ttl = DefaultHealthTTL
	}
	if probe <= 0 {
		probe = 3 * time.Second
	}
	return &SearXNG{base: strings.TrimRight(base, "/"), client: orDefault(c), now: orNow(now), ttl: ttl, probe: probe}
}

// Name returns "searxng".
func (s *SearXNG) Name() string { return "searxng" }

var searxCategory = map[string]string{
	Text: "general", Image: "images", Video: "videos", News: "news",
	Papers: "science", Code: "it", Files: "files", Music: "music",
}

// Categories returns every category.
func (s *SearXNG) Categories() []string { return AllCategories() }

// Available reports whether the last health probe, at most a TTL old,
// passed; it probes again when the cached answer has expired. Concurrent
// callers share one probe.
func (s *SearXNG) Available(ctx context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if !s.checked.IsZero() && now.Sub(s.checked) < s.ttl {
		return s.healthy
	}
	s.healthy = s.check(ctx)
	s.checked = now
	return s.healthy
}

func (s *SearXNG) check(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, s.probe)
	defer cancel()
	req, err := http.NewRequest(http.MethodGet, s.base+"/healthz", nil)
	if err != nil {
		return false
	}
	_, err = get(ctx, s.client, req, s.now)
	return err == nil
}

// Search asks the instance for q's category.
func (s *SearXNG) Search(ctx context.Context, q Query) ([]Result, error) {
	cat, ok := searxCategory[category(q)]
	if !ok {
		return nil, engineErr(Failed, "category %q not served", q.Category)
	}
	v := url.Values{"q": {q.Text}, "format": {"json"}, "categories": {cat}, "safesearch": {"1"}}
	req, err := http.NewRequest(http.MethodGet, s.base+"/search?"+v.Encode(), nil)
	if err != nil {
		return nil, engineErr(Failed, "build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	body, err := get(ctx, s.client, req, s.now)
	if err != nil {
		return nil, err
	}
	res, err := decodeSearXNG(body)
	if err != nil {
		return nil, err
	}
	if len(res) > q.Count {
		res = res[:q.Count]
	}
	return res, nil
}

// searxResponse is the part of SearXNG's JSON answer we read.
type searxResponse struct {
	Query   string `json:"query"`
	Results []struct {
		URL           string  `json:"url"`
		Title         string  `json:"title"`
		Content       string  `json:"content"`
		Engine        string  `json:"engine"`
		PublishedDate *string `json:"publishedDate"`
		ImgSrc        string  `json:"img_src"`
	} `json:"results"`
	Answers []json.RawMessage `json:"answers"`
	// NumberOfResults is the engines' estimate, often 0 with results.
	NumberOfResults float64 `json:"number_of_results"`
}

// decodeSearXNG reads a SearXNG JSON answer. A body without a results
// array is Malformed; an empty array is a genuine empty answer.
func decodeSearXNG(body []byte) ([]Result, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, engineErr(Malformed, "decode: %w", err)
	}
	if _, ok := raw["results"]; !ok {
		return nil, engineErr(Malformed, "no results field")
	}
	var r searxResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, engineErr(Malformed, "decode: %w", err)
	}
	out := make([]Result, 0, len(r.Results))
	for _, h := range r.Results {
		res := Result{Title: h.Title, URL: h.URL, Snippet: h.Content, Source: "searxng"}
		if h.PublishedDate != nil {
			res.Published = parseDate(*h.PublishedDate)
		}
		if h.ImgSrc != "" && res.Snippet == "" {
			res.Snippet = "image: " + h.ImgSrc
		}
		out = append(out, res)
	}
	return out, nil
}
