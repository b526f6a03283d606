// Package providers turns a model reference into an opened llm.Model: which
// adapter a provider name means, each provider's key and base URL (from the
// configuration, an organisation's stored keys or the environment), the
// fallback to a local Ollama server when nothing is configured, the HTTP
// client model requests share, the guarded client (package netguard) for
// the servers an organisation connects itself, and the model list of an
// OpenAI-compatible server (ListModels).
//
// A Set holds no global state: everything it reads (configuration, the
// environment, HTTP clients, a logger) is given to New, so two Sets with
// different keys can open models side by side.
package providers

import (
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/quiverhq/quiver/llm/anthropic"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/openai"
	"github.com/quiverhq/quiver/netguard"
)

// Provider is one provider's connection as configured. Empty fields fall
// back to the provider's defaults (see Set.Connection).
type Provider struct {
	// APIKey is the key itself: the deployment's file or an
	// organisation's stored key. It wins over APIKeyEnv and the
	// provider's own environment variable.
	APIKey string
	// APIKeyEnv names the environment variable holding the key.
	APIKeyEnv string
	// BaseURL overrides the provider's endpoint (OpenAI-compatible
	// servers). A provider Quiver does not know by name needs it, or a key.
	BaseURL string
	// Guarded marks an endpoint an organisation chose (its settings'
	// connections) rather than the operator: its requests go through the
	// guarded client of package netguard, in Config.Network's mode,
	// instead of Config.HTTPClient.
	Guarded bool
}

// Config is what a Set is built from. The zero value opens no model but an
// Ollama server's on localhost:11434.
type Config struct {
	// Providers are the configured connections by provider name ("openai",
	// "lmstudio", ...). Nil means none: only the environment's.
	Providers map[string]Provider
	// TextTools lists "provider:model" references whose endpoints ignore
	// native tool declarations; Open wraps those models with
	// llm/textproto.
	TextTools []string
	// Getenv reads the environment; nil reads nothing (every variable
	// empty).
	Getenv func(string) string
	// Probe sends the Ollama probe, which Open bounds to two seconds
	// itself. Nil means a client of the Set's own with no timeout.
	Probe *http.Client
	// HTTPClient sends model requests. Nil means each adapter's own
	// default client; a server shares one from NewHTTPClient.
	HTTPClient *http.Client
	// Logger records the Ollama fallback; nil discards.
	Logger *slog.Logger
	// Tools are the adapters' caches of built tool declarations, shared
	// by every model the Set opens (and by every Set given the same
	// ToolCaches); nil means each model call builds its own.
	Tools *ToolCaches
	// Network is the network mode ("public" or "self-hosted", as
	// netguard.ParseMode reads it) Guarded providers are reached in: in
	// public mode only public addresses on ports 80 and 443. Anything
	// else is public.
	Network string
}

// Set opens models for one configuration. It is immutable once built and
// safe for concurrent use.
type Set struct {
	cfg Config
	// guarded is the client of Guarded providers, built on first use.
	guarded func() *http.Client
}

// guardedMaxBytes caps one response of a Guarded provider: far above any
// model's streamed answer, and a bound on what a server an organisation
// chose can make Quiver read.
const guardedMaxBytes = 64 << 20

// New returns a Set for cfg. The Set keeps its own copies of
// cfg.Providers and cfg.TextTools, so later changes to them do not reach it.
func New(cfg Config) *Set {
	cfg.Providers = maps.Clone(cfg.Providers)
	cfg.TextTools = slices.Clone(cfg.TextTools)
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Probe == nil {
		cfg.Probe = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	mode := netguard.ParseMode(cfg.Network)
	return &Set{cfg: cfg, guarded: sync.OnceValue(func() *http.Client {
		// No overall timeout: a model streams for minutes, bounded by the
		// turn's context; the dial, TLS and each redirect are checked.
		return netguard.New(netguard.Config{Mode: mode, Timeout: -1, MaxBytes: guardedMaxBytes}).HTTP()
	})}
}

// client is the HTTP client provider's requests go through: the guarded
// one for a Guarded provider, else fallback.
func (s *Set) client(provider string, fallback *http.Client) *http.Client {
	if s.cfg.Providers[provider].Guarded {
		return s.guarded()
	}
	return fallback
}

// known describes a provider Quiver knows by name: the environment
// variables of its key and endpoint, and its endpoint when neither the
// configuration nor the environment gives one ("" is the adapter's own).
type known struct{ keyEnv, baseEnv, base string }

// Ollama's defaults are used by the fallback too.
const (
	ollama     = "ollama"
	ollamaBase = "http://localhost:11434"
)

// knownProviders are the names Quiver knows, in a fixed order.
func knownProviders() []string {
	return []string{"openai", "anthropic", "gemini", "openrouter", ollama}
}

// defaults returns what Quiver knows of a provider by name; the zero
// value for a name it does not know.
func defaults(provider string) known {
	switch provider {
	case "openai":
		return known{"OPENAI_API_KEY", "OPENAI_BASE_URL", ""}
	case "anthropic":
		return known{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""}
	case "gemini":
		return known{"GEMINI_API_KEY", "GEMINI_BASE_URL", ""}
	case "openrouter":
		return known{"OPENROUTER_API_KEY", "", "https://openrouter.ai/api/v1"}
	case ollama:
		return known{"", "OLLAMA_HOST", ollamaBase}
	}
	return known{}
}

// Connection is a provider's resolved key and base URL.
type Connection struct {
	// Key is the API key; "" when none is configured.
	Key string
	// BaseURL is the endpoint; "" means the adapter's own default.
	BaseURL string
}

// Connection resolves a provider's key and base URL. The key is the
// configured APIKey, else the variable APIKeyEnv names, else the
// provider's own variable (OPENAI_API_KEY, ...; GOOGLE_API_KEY after
// GEMINI_API_KEY). The base URL is the configured BaseURL, else the
// provider's variable (OPENAI_BASE_URL, OLLAMA_HOST, ...), else its
// default endpoint.
func (s *Set) Connection(provider string) Connection {
	d := defaults(provider)
	p := s.cfg.Providers[provider]
	c := Connection{Key: p.APIKey, BaseURL: p.BaseURL}
	if c.Key == "" && p.APIKeyEnv != "" {
		c.Key = s.cfg.Getenv(p.APIKeyEnv)
	}
	if c.Key == "" && d.keyEnv != "" {
		c.Key = s.cfg.Getenv(d.keyEnv)
	}
	if c.Key == "" && provider == "gemini" {
		c.Key = s.cfg.Getenv("GOOGLE_API_KEY")
	}
	if c.BaseURL == "" && d.baseEnv != "" {
		c.BaseURL = s.cfg.Getenv(d.baseEnv)
	}
	if c.BaseURL == "" {
		c.BaseURL = d.base
	}
	return c
}

// Configured reports whether the provider can be reached as configured:
// it has a key, or the configuration names it with a base URL (the
// environment's OLLAMA_HOST alone does not count).
func (s *Set) Configured(provider string) bool {
	c := s.Connection(provider)
	_, custom := s.cfg.Providers[provider]
	return c.Key != "" || (custom && c.BaseURL != "")
}

// anyConfigured reports whether some provider other than Ollama is
// configured at all: when none is, Open may fall back to Ollama.
func (s *Set) anyConfigured() bool {
	for _, name := range knownProviders() {
		if name != ollama && s.Connection(name).Key != "" {
			return true
		}
	}
	for name, p := range s.cfg.Providers {
		if name != ollama && (p.BaseURL != "" || s.Connection(name).Key != "") {
			return true
		}
	}
	return false
}

// Shared is what every configuration's providers share in one process:
// the environment, the HTTP clients, the logger and the tool caches (Config's fields of
// the same names). Set applies it to one configuration's providers, the
// deployment's or an organisation's view of it.
type Shared struct {
	Getenv func(string) string
	// Probe sends the Ollama probe only.
	Probe *http.Client
	// HTTPClient sends model requests; nil means each adapter's own
	// default client (quiver serve shares one from NewHTTPClient).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Tools are the adapters' tool declaration caches; nil: none.
	Tools *ToolCaches
}

// Set returns the Set of c with s's fields in place of c's.
func (s Shared) Set(c Config) *Set {
	c.Getenv, c.Probe, c.HTTPClient, c.Logger, c.Tools = s.Getenv, s.Probe, s.HTTPClient, s.Logger, s.Tools
	return New(c)
}

// ToolCaches hold, per adapter, the tool declarations built and encoded
// once per list of definitions (openai.ToolCache, anthropic.ToolCache,
// gemini.ToolCache): the turns of one agent and toolset then build them
// once, and send the same bytes as without them. A process keeps one.
type ToolCaches struct {
	OpenAI    *openai.ToolCache
	Anthropic *anthropic.ToolCache
	Gemini    *gemini.ToolCache
}

// NewToolCaches returns caches of at most max definition lists each;
// max <= 0 means llm.DefaultToolCacheEntries.
func NewToolCaches(max int) *ToolCaches {
	return &ToolCaches{OpenAI: openai.NewToolCache(max), Anthropic: anthropic.NewToolCache(max), Gemini: gemini.NewToolCache(max)}
}
