// Package fetch provides fetch_url, which reads one web page as Markdown or
// text in slices, and research_web, which searches, reads a few result pages
// and returns the passages that bear on a question, each with its URL.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/quiverhq/quiver/builtin/webrules"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Limits of fetch_url. A fetched page is untrusted text and the costliest
// to carry (every later model call of the turn pays for it again), so its
// per-call maximum is the lowest of the reading tools' (read_file,
// search_files, read_tool_result and read_transcript allow 20,000): the
// model reads a page in short slices and stops once it has what it needs.
const (
	// DefaultMaxLength is the slice size when max_length is absent: about
	// 1,000 tokens, read_tool_result's default, which holds a short article
	// whole.
	DefaultMaxLength = 4000
	// MaxMaxLength is the largest slice one call returns. With the header
	// (at most MaxHeaderChars) a whole answer stays within dispatch's
	// 8,000-character inline threshold.
	MaxMaxLength = 7000
	// MaxHeaderChars bounds what an answer adds around its slice: the URL,
	// redirect and title lines (each clipped), the position line and the
	// continuation hint.
	MaxHeaderChars = 1000
	// maxTitleChars and maxURLChars clip a page's title and the URLs
	// echoed in the header, which the page or the model could make long.
	maxTitleChars = 200
	maxURLChars   = 250
	// DefaultMaxBodyBytes caps the bytes read from one response.
	DefaultMaxBodyBytes = 5 << 20
	// DefaultCrawl4AITimeout bounds one sidecar request, leaving the rest
	// of the call's budget to the direct fetch that follows a failure.
	DefaultCrawl4AITimeout = 15 * time.Second
	defaultUserAgent       = "Quiver/1 (+fetch_url)"
)

// Config configures both tools. Client is required; every other zero value
// is documented on its field.
type Config struct {
	// Client performs every page request. Production passes the guarded
	// client (netguard), which refuses private destinations at dial time and
	// follows at most a few redirects; fetch itself applies no address
	// policy. FetchTool and ResearchTool panic when it is nil.
	Client *http.Client
	// MaxBodyBytes caps the bytes read from one response; longer bodies are
	// cut and the answer says so. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// UserAgent is sent with every page request. Empty means
	// "Quiver/1 (+fetch_url)".
	UserAgent string
	// SelfHosted reports that the deployment runs in netguard's self-hosted
	// mode. Crawl4AI is allowed only then: its browser resolves addresses
	// outside our guard.
	SelfHosted bool
	// Crawl4AIURL is the base URL of a Crawl4AI server ("http://crawl4ai:11235")
	// tried before the direct fetch. Empty means no sidecar. Setting it
	// without SelfHosted is a configuration error (see Check).
	Crawl4AIURL string
	// Crawl4AIToken, when set, is sent to the sidecar as a bearer token.
	Crawl4AIToken string
	// CheckURL approves a page's destination before the sidecar is asked
	// for it, since the sidecar's browser dials outside the guarded client
	// (netguard's CheckURL: metadata addresses stay refused in self-hosted
	// mode too). Nil means no check.
	CheckURL func(ctx context.Context, raw string) error
	// Crawl4AITimeout bounds one sidecar request. Zero means
	// DefaultCrawl4AITimeout.
	Crawl4AITimeout time.Duration
	// CacheEntries is how many converted pages are kept per process, keyed
	// by organisation, conversation and URL, so that paging through a page
	// fetches it once. Zero means 16; negative disables the cache.
	CacheEntries int
	// PagesPerCall caps the pages one research_web call reads. Zero means 3.
	PagesPerCall int
	// PagesPerTurn caps the pages research_web reads in one turn, across
	// calls with the same Scope.TurnID. Zero means 9.
	PagesPerTurn int
	// ReadPDF extracts a PDF's title and text. Nil means the process's
	// shared PDFium reader (ReadPDF, DefaultPDFReader), which production
	// uses too. An error's message is shown to the model.
	ReadPDF func(ctx context.Context, body []byte) (title, text string, err error)
	// ExcludeProviders names model providers ("novelai") whose turns get
	// neither fetch_url nor research_web, each left out with a reason
	// naming the provider. The deployment passes web.exclude_providers,
	// the list that withholds web_search, so one list keeps a provider
	// off all the web tools. Nil excludes none.
	ExcludeProviders []string
	// Logger receives sidecar failures. Nil means slog.Default().
	Logger *slog.Logger
}

// Check reports a configuration that the tools refuse: no client, or a
// Crawl4AI sidecar outside self-hosted mode, or a sidecar URL that does not
// parse as an http(s) URL.
func (c Config) Check() error {
	if c.Client == nil {
		return errors.New("fetch: Config.Client is required")
	}
	if c.Crawl4AIURL == "" {
		return nil
	}
	if !c.SelfHosted {
		return errors.New("fetch: a Crawl4AI sidecar is allowed only in self-hosted mode: its browser reaches addresses the guard cannot check")
	}
	u, err := url.Parse(c.Crawl4AIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("fetch: Crawl4AI URL %q is not an http(s) URL", c.Crawl4AIURL)
	}
	return nil
}

// fetcher reads pages for both tools. It is safe for concurrent use.
type fetcher struct {
	cfg   Config
	conv  *converter.Converter
	cache *pageCache
	log   *slog.Logger
}

// newFetcher applies Config defaults. It panics when cfg.Check fails: a
// tool built from a bad configuration must not reach the registry.
func newFetcher(cfg Config) *fetcher {
	if err := cfg.Check(); err != nil {
		panic(err.Error())
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = defaultUserAgent
	}
	if cfg.Crawl4AITimeout <= 0 {
		cfg.Crawl4AITimeout = DefaultCrawl4AITimeout
	}
	if cfg.CacheEntries == 0 {
		cfg.CacheEntries = 16
	}
	if cfg.PagesPerCall <= 0 {
		cfg.PagesPerCall = 3
	}
	if cfg.PagesPerTurn <= 0 {
		cfg.PagesPerTurn = 9
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg.ExcludeProviders = slices.Clone(cfg.ExcludeProviders)
	return &fetcher{cfg: cfg, conv: newConverter(), cache: newPageCache(cfg.CacheEntries), log: log}
}

// requires is both tools' requirement: "" unless the turn's model provider
// is one the configuration excludes from the web tools.
func (f *fetcher) requires(t turn.Selection) string {
	return webrules.ProviderExcluded(f.cfg.ExcludeProviders, t.Model.Provider)
}

// document returns the page at u converted to text, from the cache when the
// same conversation read it before, else from the sidecar when one is
// configured, else directly.
func (f *fetcher) document(ctx context.Context, s tool.Scope, u *url.URL) (document, error) {
	key := cacheKey(s, u)
	if d, ok := f.cache.get(key); ok {
		return d, nil
	}
	var d document
	var err error
	if f.cfg.Crawl4AIURL != "" {
		if f.cfg.CheckURL != nil {
			if err := f.cfg.CheckURL(ctx, u.String()); err != nil {
				return document{}, err
			}
		}
		d, err = f.crawl4AI(ctx, u)
		if err != nil {
			f.log.Warn("crawl4ai failed; fetching directly", "host", u.Host, "err", err)
		}
	}
	if f.cfg.Crawl4AIURL == "" || err != nil {
		d, err = f.direct(ctx, u)
	}
	if err != nil {
		return document{}, err
	}
	d.Title = clip(d.Title, maxTitleChars)
	f.cache.put(key, d)
	return d, nil
}

// direct GETs u through the configured client and converts the body.
func (f *fetcher) direct(ctx context.Context, u *url.URL) (document, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return document{}, fmt.Errorf("fetch %s: %w", redact(u), err)
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		return document{}, requestError(ctx, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return document{}, fmt.Errorf("fetch %s: HTTP %s", redact(u), resp.Status)
	}
	final := resp.Request.URL
	ct := resp.Header.Get("Content-Type")
	declared := declaredType(ct)
	if declared != "" && !textual(declared) {
		return document{}, binaryError{mediaType: declared}
	}
	// A PDF cut at the cap cannot be parsed: refuse one that says it is too
	// long before reading it.
	if declared == pdfType && resp.ContentLength > f.cfg.MaxBodyBytes {
		return document{}, pdfTooLarge(f.cfg.MaxBodyBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBodyBytes+1))
	if err != nil {
		return document{}, requestError(ctx, u, err)
	}
	truncated := int64(len(body)) > f.cfg.MaxBodyBytes
	if truncated {
		body = body[:f.cfg.MaxBodyBytes]
		if mediaType(ct, body) == pdfType {
			return document{}, pdfTooLarge(f.cfg.MaxBodyBytes)
		}
	}
	d, err := f.convertWithin(ctx, body, ct, final)
	d.Truncated = truncated
	return d, err
}

// convertWithin converts body as convert does but answers when ctx ends
// even if the conversion has not: a hostile PDF can keep the parser busy
// past the call's budget, and the turn must not wait for it. The
// conversion then finishes, or not, on its own; its work is bounded by
// the PDF reader's budgets.
func (f *fetcher) convertWithin(ctx context.Context, body []byte, ct string, page *url.URL) (document, error) {
	type result struct {
		d   document
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := f.convert(ctx, body, ct, page)
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-ctx.Done():
		return document{}, requestError(ctx, page, ctx.Err())
	}
}
