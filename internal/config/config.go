package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quiverhq/quiver/runs"
)

// MaxConfigFileBytes bounds a configuration file.
const MaxConfigFileBytes = 1 << 20

// Config is Quiver's deployment configuration (quiver --config FILE). The
// zero value is valid: providers come from the usual environment variables.
type Config struct {
	// Providers configures model providers by name ("openai", "anthropic",
	// "gemini", "ollama", "openrouter", or any OpenAI-compatible name with a
	// base_url). Unset fields fall back to the environment.
	Providers map[string]Provider `yaml:"providers"`
	// Prices are per-model prices per million tokens, by "provider:model".
	Prices map[string]Price `yaml:"prices"`
	// MaxSteps bounds the model steps of one turn; zero means the default.
	MaxSteps int `yaml:"max_steps"`
	// Models sets what Quiver should assume of each model, by
	// "provider:model": its context window, to which each model call's
	// history is cut.
	Models map[string]Model `yaml:"models"`
	// PromptCache is how many rendered system prompts a process keeps
	// (one per agent prompt, capabilities and toolset met); zero means
	// 512. At most 100000.
	PromptCache int `yaml:"prompt_cache"`
	// SelectionCache is how many selections a process keeps (a turn's
	// selected and gated toolset with its request's fixed part, one per
	// catalog, agent prompt, tool-selecting facts and open targets met;
	// engine.Selections); zero means 512. At most 100000.
	SelectionCache int `yaml:"selection_cache"`
	// EmbeddingModel is the embedding model memory and retrieval use, as
	// "provider:model" (EmbeddingRef): "" means the built-in local
	// embedder, local:ngram-512, which needs no network and no weights
	// but is weaker than a real model; "off" means none, and the tools
	// that need one are not declared.
	EmbeddingModel string `yaml:"embedding_model"`
	// TextTools lists "provider:model" references whose endpoints ignore
	// native tool declarations: Quiver declares the tools in the prompt and
	// parses calls from the reply instead (llm/textproto).
	TextTools []string `yaml:"text_tools"`
	// Network is the egress policy for destinations a model or user chose.
	Network Network `yaml:"network"`
	// Web configures web_search's engines and the URL reader.
	Web Web `yaml:"web"`
	// Secrets says where the keys that encrypt stored tokens come from.
	Secrets Secrets `yaml:"secrets"`
	// MCP bounds user-registered MCP servers.
	MCP MCP `yaml:"mcp"`
	// Intent configures Deliberate Tool Mode.
	Intent Intent `yaml:"intent"`
	// Discovery says when a large toolset is declared in part and found
	// with search_tools (tool discovery).
	Discovery Discovery `yaml:"discovery"`
	// Database selects the store: SQLite in the data folder unless a
	// PostgreSQL URL is given (see Config.DatabaseURL).
	Database Database `yaml:"database"`
	// Runs tunes how running turns are held across replicas.
	Runs Runs `yaml:"runs"`
	// Scheduler tunes how scheduled tasks are run.
	Scheduler Scheduler `yaml:"scheduler"`
	// ToolCalls bounds the tool calls of a step and of a turn.
	ToolCalls ToolCalls `yaml:"tool_calls"`
	// StoredResults bounds the stored tool result bodies per conversation
	// and per user.
	StoredResults StoredResults `yaml:"stored_results"`
	// Turns bounds running turns: model stream silence, wall time,
	// turns at once per user and per server.
	Turns Turns `yaml:"turns"`
	// HTTP bounds the HTTP servers' connections.
	HTTP HTTP `yaml:"http"`
	// Server says how people reach quiver serve (its public URL).
	Server Server `yaml:"server"`
	// Code configures run_code: its isolation level and limits.
	Code Code `yaml:"code"`
	// Artifacts configures the artifact tools' browser checks.
	Artifacts Artifacts `yaml:"artifacts"`
}

// Database selects the store. With no URL from any source, Quiver keeps
// its SQLite database in the data folder (one process); with one, every
// replica shares that PostgreSQL database.
type Database struct {
	// URL is a PostgreSQL connection URL (postgres://user:password@host/db).
	// Prefer URLEnv or QUIVER_DATABASE_URL, so the file holds no password.
	URL string `yaml:"url"`
	// URLEnv names the environment variable holding the URL.
	URLEnv string `yaml:"url_env"`
}

// DatabaseURLEnv is the environment variable whose PostgreSQL URL, when
// set, is used over the configuration's database settings.
const DatabaseURLEnv = "QUIVER_DATABASE_URL"

// Network is the egress policy.
type Network struct {
	// Mode is "public" (the default: loopback, private and internal
	// addresses refused, HTTPS required for MCP) or "self-hosted" (private
	// and loopback allowed). Cloud metadata addresses are refused in both.
	Mode string `yaml:"mode"`
}

// Web configures the web tools. Keys are read from the named environment
// variables, so the file holds no secret.
type Web struct {
	// Disabled keeps web search out of every turn: the built-in
	// web_search, research_web (which searches with it) and an
	// organisation's MCP server that replaces web_search.
	Disabled bool `yaml:"disabled"`
	// BraveKeyEnv names the variable with the Brave Search API key; empty
	// means BRAVE_API_KEY.
	BraveKeyEnv string `yaml:"brave_key_env"`
	// SearXNGURL enables a SearXNG instance (self-hosted mode for a local one).
	SearXNGURL string `yaml:"searxng_url"`
	// IAskURL and IAskKeyEnv enable the IAsk engine over HTTP.
	IAskURL    string `yaml:"iask_url"`
	IAskKeyEnv string `yaml:"iask_key_env"`
	// DuckDuckGoDisabled takes DuckDuckGo out of the engine chain.
	DuckDuckGoDisabled bool `yaml:"duckduckgo_disabled"`
	// IAskMCPURL is an MCP server whose tool serves the IAsk engine
	// instead of the HTTP endpoint; IAskMCPTool names the tool (default
	// "iask_search") and IAskMCPTokenEnv the environment variable holding
	// its bearer token.
	IAskMCPURL      string `yaml:"iask_mcp_url"`
	IAskMCPTool     string `yaml:"iask_mcp_tool"`
	IAskMCPTokenEnv string `yaml:"iask_mcp_token_env"`
	// Crawl4AIURL enables a Crawl4AI sidecar for fetch_url; allowed only in
	// self-hosted mode, since its browser dials outside the guard.
	Crawl4AIURL string `yaml:"crawl4ai_url"`
	// ExcludeProviders names model providers that cannot use the web tools
	// well; their turns get none of web_search, fetch_url and research_web.
	ExcludeProviders []string `yaml:"exclude_providers"`
}

// Secrets names the encryption keys for tokens at rest (MCP auth tokens).
// Give at most one source. With none, Quiver refuses to store a token and
// refuses to start while stored tokens exist.
type Secrets struct {
	// KeyFile is a file of "id:BASE64" lines, the first the primary key;
	// it must not be readable by group or others.
	KeyFile string `yaml:"key_file"`
	// KeysEnv names an environment variable holding the same list,
	// comma-separated.
	KeysEnv string `yaml:"keys_env"`
}

// MCP bounds registered MCP servers. Zero values take the defaults
// (10 servers, 15 s connect, 30 s call, 10 min idle close, 5 min cooldown,
// 8 MiB responses, 2 s recheck TTL).
type MCP struct {
	// Slots is how many servers an organisation may register.
	Slots int `yaml:"slots"`
	// ConnectTimeout bounds a connect plus tool discovery ("15s").
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// CallTimeout bounds one tool call.
	CallTimeout Duration `yaml:"call_timeout"`
	// IdleClose closes a connection unused for this long.
	IdleClose Duration `yaml:"idle_close"`
	// Cooldown is how long a server that failed to connect is skipped.
	Cooldown Duration `yaml:"cooldown"`
	// MaxResponseBytes caps one response body, and one event of a stream.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// RecheckTTL is how long the registration read to re-check one tool
	// call is reused by the next calls: a server disabled or removed
	// through another replica is refused within it (through this one, at
	// once). At most 1m.
	RecheckTTL Duration `yaml:"recheck_ttl"`
}

// Runs tunes how `quiver serve` holds running turns across replicas
// (package runs). Zero values take the defaults: a 30s lease renewed
// every 2s, expired leases reaped every 5s, events kept 1h, text
// gathered 50ms per recorded event.
type Runs struct {
	// Lease is how long a replica that stops renewing keeps its turns
	// before the others record them as interrupted; more than two
	// heartbeats.
	Lease Duration `yaml:"lease"`
	// Heartbeat is how often a replica renews its leases and picks up
	// cancel requests sent to other replicas.
	Heartbeat Duration `yaml:"heartbeat"`
	// Reap is how often expired leases are looked for.
	Reap Duration `yaml:"reap"`
	// EventsRetention is how long a turn's recorded events stay
	// resumable.
	EventsRetention Duration `yaml:"events_retention"`
	// TextFlush is how long text deltas are gathered into one event
	// (at most 1s).
	TextFlush Duration `yaml:"text_flush"`
}

// Intent configures Deliberate Tool Mode.
type Intent struct {
	// PacksDir holds extra keyword packs (*.yaml, the format of
	// intent/packs), loaded after the built-in ones and validated at start.
	PacksDir string `yaml:"packs_dir"`
	// Classifier is "on" (the default, also "") or "off": whether the
	// learned stage judges messages beside the packs (intent.Classifier).
	Classifier string `yaml:"classifier"`
	// ClassifierShift moves the classifier's thresholds and vetoes, in
	// probability (-0.5..0.5; positive opens fewer families, negative
	// more); 0 keeps the ones chosen on the corpus's validation split.
	ClassifierShift float64 `yaml:"classifier_shift"`
	// Semantic is "off" (the default, also "") or "on": whether the
	// semantic stage (intent.Semantic) compares each message with the
	// families' exemplars under the organisation's embedding model, for
	// an organisation that has one.
	Semantic string `yaml:"semantic"`
}

// Discovery configures deferred tool loading (engine.Deferral): past
// either size, a turn declares its always-on and Core tools with the
// discovery tools, and the model finds the rest.
type Discovery struct {
	// Defer is "on" (the default, also "") or "off".
	Defer string `yaml:"defer"`
	// OverTools and OverChars are the sizes past which a turn defers (the
	// tools it would declare, their definitions' characters); 0 means
	// engine.DefaultDeferOverTools (40) and DefaultDeferOverChars
	// (40,000).
	OverTools int `yaml:"defer_over_tools"`
	OverChars int `yaml:"defer_over_chars"`
	// Core names tools kept declared besides the always-on ones, at most
	// 100.
	Core []string `yaml:"core"`
}

// maxDiscoveryCore bounds discovery.core.
const maxDiscoveryCore = 100

// validate reports the first thing wrong with d.
func (d Discovery) validate() error {
	switch {
	case d.Defer != "" && d.Defer != "on" && d.Defer != "off":
		return fmt.Errorf("discovery.defer %q: use on or off", d.Defer)
	case d.OverTools < 0 || d.OverChars < 0:
		return errors.New("discovery.defer_over_tools and defer_over_chars cannot be negative")
	case len(d.Core) > maxDiscoveryCore:
		return fmt.Errorf("discovery.core names %d tools; the limit is %d", len(d.Core), maxDiscoveryCore)
	}
	return nil
}

// ClassifierOn reports whether the learned stage is on.
func (i Intent) ClassifierOn() bool { return i.Classifier != "off" }

// SemanticOn reports whether the semantic stage is on.
func (i Intent) SemanticOn() bool { return i.Semantic == "on" }

// Duration is a time.Duration written as in Go ("30s", "10m").
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// UnmarshalYAML parses a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (use forms like 30s or 10m)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Provider is one model provider's connection.
type Provider struct {
	// APIKey is the key itself; prefer APIKeyEnv so the file holds no secret.
	APIKey string `yaml:"api_key"`
	// APIKeyEnv names the environment variable holding the key.
	APIKeyEnv string `yaml:"api_key_env"`
	// BaseURL overrides the provider's endpoint (OpenAI-compatible servers).
	BaseURL string `yaml:"base_url"`
	// Guarded is never read from the file: an organisation's settings set
	// it on the connections they add (see providers.Provider.Guarded).
	Guarded bool `yaml:"-"`
}

// Price is a model's price per million tokens. Zero CachedInput or
// CacheWrite means the Input price.
type Price struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input"`
	CacheWrite  float64 `yaml:"cache_write"`
	Output      float64 `yaml:"output"`
}

var providerName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// LoadConfig reads and validates a configuration file. An empty path gives
// the zero Config.
func LoadConfig(path string) (Config, error) {
	if path == "" {
		return Config{}, nil
	}
	return load(path, "config file", MaxConfigFileBytes, ParseConfig)
}

// ParseConfig decodes and validates a configuration.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, yamlError(err)
	}
	return c, c.Validate()
}

// Validate checks every field and returns the first problem found.
func (c Config) Validate() error {
	for name, p := range c.Providers {
		if !providerName.MatchString(name) {
			return fmt.Errorf("providers: %q is not a provider name", name)
		}
		if p.APIKey != "" && p.APIKeyEnv != "" {
			return fmt.Errorf("providers.%s: set api_key or api_key_env, not both", name)
		}
	}
	for ref, p := range c.Prices {
		if _, err := ParseModelRef(ref); err != nil {
			return fmt.Errorf("prices: %w", err)
		}
		if p.Input < 0 || p.CachedInput < 0 || p.CacheWrite < 0 || p.Output < 0 {
			return fmt.Errorf("prices.%s: prices cannot be negative", ref)
		}
	}
	if err := c.validateModels(); err != nil {
		return err
	}
	for i, ref := range c.TextTools {
		if _, err := ParseModelRef(ref); err != nil {
			return fmt.Errorf("text_tools[%d]: %w", i, err)
		}
	}
	if _, err := ParseEmbeddingRef(c.EmbeddingModel); err != nil {
		return fmt.Errorf("embedding_model: %w", err)
	}
	switch c.Intent.Classifier {
	case "", "on", "off":
	default:
		return fmt.Errorf("intent.classifier %q: use on or off", c.Intent.Classifier)
	}
	switch c.Intent.Semantic {
	case "", "on", "off":
	default:
		return fmt.Errorf("intent.semantic %q: use on or off", c.Intent.Semantic)
	}
	if err := c.Discovery.validate(); err != nil {
		return err
	}
	if math.IsNaN(c.Intent.ClassifierShift) || math.Abs(c.Intent.ClassifierShift) > 0.5 {
		return fmt.Errorf("intent.classifier_shift %v: use a number from -0.5 to 0.5", c.Intent.ClassifierShift)
	}
	switch c.Network.Mode {
	case "", "public", "self-hosted":
	default:
		return fmt.Errorf("network.mode %q: use public or self-hosted", c.Network.Mode)
	}
	if c.Web.Crawl4AIURL != "" && c.Network.Mode != "self-hosted" {
		return errors.New("web.crawl4ai_url: a Crawl4AI sidecar needs network.mode self-hosted (its browser dials outside the guard)")
	}
	if c.Web.IAskURL != "" && c.Web.IAskMCPURL != "" {
		return errors.New("web: set iask_url or iask_mcp_url, not both")
	}
	if c.Secrets.KeyFile != "" && c.Secrets.KeysEnv != "" {
		return errors.New("secrets: set key_file or keys_env, not both")
	}
	if err := c.MCP.validate(); err != nil {
		return err
	}
	if err := c.Artifacts.validate(); err != nil {
		return err
	}
	if err := c.Code.validate(); err != nil {
		return err
	}
	if err := c.Database.validate(); err != nil {
		return err
	}
	if err := c.Runs.validate(); err != nil {
		return err
	}
	if err := c.Scheduler.validate(); err != nil {
		return err
	}
	if err := c.ToolCalls.validate(); err != nil {
		return err
	}
	if err := c.StoredResults.validate(); err != nil {
		return err
	}
	if err := c.Turns.validate(); err != nil {
		return err
	}
	if err := c.HTTP.validate(); err != nil {
		return err
	}
	if err := c.Server.validate(); err != nil {
		return err
	}
	if c.MaxSteps < 0 || c.MaxSteps > 1000 {
		return fmt.Errorf("max_steps %d: use 1–1000, or 0 for the default", c.MaxSteps)
	}
	if c.PromptCache < 0 || c.PromptCache > 100000 {
		return fmt.Errorf("prompt_cache %d: use 1–100000, or 0 for the default (512)", c.PromptCache)
	}
	if c.SelectionCache < 0 || c.SelectionCache > 100000 {
		return fmt.Errorf("selection_cache %d: use 1–100000, or 0 for the default (512)", c.SelectionCache)
	}
	return nil
}

func (m MCP) validate() error {
	if m.Slots < 0 || m.Slots > 1000 {
		return fmt.Errorf("mcp.slots %d: use 1–1000, or 0 for the default", m.Slots)
	}
	durations := []struct {
		name string
		d    Duration
	}{{"connect_timeout", m.ConnectTimeout}, {"call_timeout", m.CallTimeout}, {"idle_close", m.IdleClose}, {"cooldown", m.Cooldown}}
	for _, f := range durations {
		if f.d < 0 || time.Duration(f.d) > 24*time.Hour {
			return fmt.Errorf("mcp.%s: use a duration between 0 (the default) and 24h", f.name)
		}
	}
	if m.MaxResponseBytes < 0 || m.MaxResponseBytes > 1<<30 {
		return errors.New("mcp.max_response_bytes: use 0 (the default, 8 MiB) up to 1 GiB")
	}
	if time.Duration(m.RecheckTTL) > time.Minute {
		return errors.New("mcp.recheck_ttl: use a duration up to 1m (0: the default, 2s; negative: no reuse, every call reads the database)")
	}
	return nil
}

// validate checks the runs settings by runs.Config.Check's rules: each
// duration 0 (the default) or positive up to 24h, the lease longer than
// two heartbeats, text_flush at most 1s.
func (r Runs) validate() error { return r.Config().Check() }

// Config is r as the runs registry's settings (its stores, replica name
// and clock left for the caller).
func (r Runs) Config() runs.Config {
	return runs.Config{Lease: r.Lease.Std(), Heartbeat: r.Heartbeat.Std(), Reap: r.Reap.Std(),
		Retention: r.EventsRetention.Std(), TextFlush: r.TextFlush.Std()}
}

// validate checks the database settings; a URL given in the file must be
// a postgres:// (or postgresql://) URL. No message quotes the URL, which
// may hold a password.
func (d Database) validate() error {
	if d.URL != "" && d.URLEnv != "" {
		return errors.New("database: set url or url_env, not both")
	}
	if d.URL != "" && !isPostgresURL(d.URL) {
		return errors.New("database.url: give a postgres:// or postgresql:// URL")
	}
	return nil
}

// DatabaseURL returns the PostgreSQL URL in force: $QUIVER_DATABASE_URL,
// else the variable database.url_env names, else database.url; "" means
// SQLite in the data folder. A URL from the environment that is not a
// postgres:// URL, or an empty url_env variable, is an error naming its
// source, never quoting the URL.
func (c Config) DatabaseURL(getenv func(string) string) (string, error) {
	if u := getenv(DatabaseURLEnv); u != "" {
		if !isPostgresURL(u) {
			return "", fmt.Errorf("$%s: give a postgres:// or postgresql:// URL", DatabaseURLEnv)
		}
		return u, nil
	}
	if env := c.Database.URLEnv; env != "" {
		u := getenv(env)
		if u == "" {
			return "", fmt.Errorf("database.url_env: $%s is empty", env)
		}
		if !isPostgresURL(u) {
			return "", fmt.Errorf("database.url_env $%s: give a postgres:// or postgresql:// URL", env)
		}
		return u, nil
	}
	return c.Database.URL, nil
}

// isPostgresURL reports whether s is a URL of the postgres or postgresql
// scheme.
func isPostgresURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}
