package web

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/builtin/webrules"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

//go:embed web_search.md
var description string

// Config configures web_search and its engines. An engine is in the chain
// when its section is configured: Brave with an API key, SearXNG with a base
// URL, DuckDuckGo unless disabled, IAsk with a base URL or a backend.
type Config struct {
	// Disabled keeps web_search out of every turn.
	Disabled bool
	// ExcludeProviders names model providers ("novelai") that cannot use
	// the tool well; their turns do not get it. Nil excludes none.
	ExcludeProviders []string
	// Client sends every engine request. Production passes the netguard
	// client, which checks every dialled address; tests pass plain clients
	// pointed at loopback fakes. Nil means http.DefaultClient (unguarded).
	Client *http.Client
	// UserAgent is sent to DuckDuckGo; empty means a generic one.
	UserAgent string
	Brave     BraveConfig
	SearXNG   SearXNGConfig
	// DuckDuckGo needs no key: it is in the chain unless Disabled.
	DuckDuckGo DuckDuckGoConfig
	IAsk       IAskConfig
	// Timeout bounds each engine's attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// Cooldown is how long a failing engine is skipped when it named no
	// wait of its own (Retry-After, Brave's X-RateLimit-Reset); zero means
	// DefaultCooldown.
	Cooldown time.Duration
	// Now is the clock for cooldowns and probe caching; nil means clock.Now.
	Now func() time.Time
	// Logger receives engine failures (never keys); nil means none.
	Logger *slog.Logger
}

// BraveConfig enables Brave when APIKey is set. Empty BaseURL means BraveURL.
type BraveConfig struct {
	APIKey  string
	BaseURL string
}

// SearXNGConfig enables SearXNG when BaseURL is set. Zero HealthTTL means
// DefaultHealthTTL; zero ProbeTimeout means 3 s.
type SearXNGConfig struct {
	BaseURL      string
	HealthTTL    time.Duration
	ProbeTimeout time.Duration
}

// DuckDuckGoConfig: Disabled takes DuckDuckGo out of the chain; empty
// BaseURL means DuckDuckGoURL.
type DuckDuckGoConfig struct {
	Disabled bool
	BaseURL  string
}

// IAskConfig enables IAsk when Backend is set (an MCP-served backend) or,
// failing that, when BaseURL is set (the HTTP backend, with APIKey as its
// bearer token).
type IAskConfig struct {
	BaseURL string
	APIKey  string
	Backend IAskBackend
}

// Engines returns the configured engines in chain order: Brave, SearXNG,
// DuckDuckGo, IAsk.
func Engines(cfg Config) []Engine {
	var es []Engine
	if cfg.Brave.APIKey != "" {
		es = append(es, NewBrave(cfg.Brave.APIKey, cfg.Brave.BaseURL, cfg.Client, cfg.Now))
	}
	if cfg.SearXNG.BaseURL != "" {
		es = append(es, NewSearXNG(cfg.SearXNG.BaseURL, cfg.Client, cfg.Now, cfg.SearXNG.HealthTTL, cfg.SearXNG.ProbeTimeout))
	}
	if !cfg.DuckDuckGo.Disabled {
		es = append(es, NewDuckDuckGo(cfg.DuckDuckGo.BaseURL, cfg.UserAgent, cfg.Client, cfg.Now))
	}
	switch {
	case cfg.IAsk.Backend != nil:
		es = append(es, NewIAsk(cfg.IAsk.Backend))
	case cfg.IAsk.BaseURL != "":
		es = append(es, NewIAsk(NewIAskHTTP(cfg.IAsk.BaseURL, cfg.IAsk.APIKey, cfg.Client, cfg.Now)))
	}
	return es
}

// Search is web_search's long-lived state: the engine chain, with its
// cooldowns and probe cache, and the tool's availability rules. Build one
// per process and derive each turn's tool from it. Safe for concurrent use.
type Search struct {
	chain    *Chain
	disabled bool
	exclude  []string
}

// New builds the chain cfg describes.
func New(cfg Config) *Search {
	c := NewChain(Engines(cfg), ChainOptions{Timeout: cfg.Timeout, Cooldown: cfg.Cooldown, Now: cfg.Now, Logger: cfg.Logger})
	return &Search{chain: c, disabled: cfg.Disabled, exclude: slices.Clone(cfg.ExcludeProviders)}
}

// Chain returns the engine chain.
func (s *Search) Chain() *Chain { return s.chain }

// Tool returns web_search declaring every category the configured engines
// serve (no probes, no cooldowns): the default definition.
func (s *Search) Tool() *tool.Tool { return s.ToolFor(s.chain.Configured()) }

// TurnTool returns web_search declaring only the categories some engine can
// serve now (SearXNG's cached probe and cooldowns considered). The registry
// calls it when assembling a turn.
func (s *Search) TurnTool(ctx context.Context) *tool.Tool {
	return s.ToolFor(s.chain.Categories(ctx))
}

// ToolFor returns web_search whose category enum is cats (text is always
// kept, unknown names dropped). Every tool it returns shares the chain.
func (s *Search) ToolFor(cats []string) *tool.Tool {
	enum := []any{Text}
	for _, c := range allCategories[1:] {
		if slices.Contains(cats, c) {
			enum = append(enum, c)
		}
	}
	return tool.New(tool.Spec{
		Name:        "web_search",
		Family:      "web_search",
		Macros:      []string{"web_search_tool", "image_search_tool", "video_search_tool", "news_search_tool"},
		Description: strings.TrimSpace(description),
		Access:      tool.Read,
		Requires:    s.requires,
		Fragments:   []string{webrules.Queries(), webrules.Untrusted()},
		Limits: []tool.Limit{
			{Name: "count_default", Value: DefaultCount}, {Name: "count_max", Value: MaxCount},
			{Name: "title_chars", Value: MaxTitle}, {Name: "snippet_chars", Value: MaxSnippet},
		},
		Tune: func(sc *jsonschema.Schema) { tune(sc, enum) },
	}, s.run)
}

// Tool returns web_search over a new chain built from cfg, declaring the
// configured engines' categories. Cooldowns live in the chain, so build the
// tool once (or keep a *Search) rather than once per call.
func Tool(cfg Config) *tool.Tool { return New(cfg).Tool() }

// input is web_search's arguments.
type input struct {
	Query    string `json:"query" jsonschema:"search terms"`
	Category string `json:"category,omitempty"`
	Count    int    `json:"count,omitempty"`
}

func tune(s *jsonschema.Schema, enum []any) {
	lo, hi := 1.0, float64(MaxCount)
	minLen := 1
	s.Properties["query"].MinLength = &minLen
	cat := s.Properties["category"]
	cat.Enum, cat.Default = enum, []byte(`"text"`)
	cnt := s.Properties["count"]
	cnt.Minimum, cnt.Maximum, cnt.Default = &lo, &hi, []byte(fmt.Sprint(DefaultCount))
}

func (s *Search) requires(f turn.Selection) string {
	if s.disabled {
		return "web search is disabled in config"
	}
	return webrules.ProviderExcluded(s.exclude, f.Model.Provider)
}

func (s *Search) run(ctx context.Context, _ tool.Scope, in input) (string, error) {
	q := Query{Text: strings.TrimSpace(in.Query), Category: in.Category, Count: in.Count}
	if q.Text == "" {
		return "", errors.New("query is empty")
	}
	out, err := s.chain.Search(ctx, q)
	switch {
	case err != nil && ctx.Err() != nil:
		return "", tool.Infra(err)
	case err != nil:
		return "", err
	}
	return Render(q, out), nil
}
