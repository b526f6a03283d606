package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"

	"go.yaml.in/yaml/v3"
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
	// TextTools lists "provider:model" references whose endpoints ignore
	// native tool declarations: Quiver declares the tools in the prompt and
	// parses calls from the reply instead (llm/textproto).
	TextTools []string `yaml:"text_tools"`
	// Network is the egress policy for destinations a model or user chose.
	Network Network `yaml:"network"`
	// Web configures web_search's engines and the URL reader.
	Web Web `yaml:"web"`
}

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
	// Disabled keeps web_search out of every turn.
	Disabled bool `yaml:"disabled"`
	// BraveKeyEnv names the variable with the Brave Search API key; empty
	// means BRAVE_API_KEY.
	BraveKeyEnv string `yaml:"brave_key_env"`
	// SearXNGURL enables a SearXNG instance (self-hosted mode for a local one).
	SearXNGURL string `yaml:"searxng_url"`
	// IAskURL and IAskKeyEnv enable the IAsk engine over HTTP.
	IAskURL    string `yaml:"iask_url"`
	IAskKeyEnv string `yaml:"iask_key_env"`
	// Crawl4AIURL enables a Crawl4AI sidecar for fetch_url; allowed only in
	// self-hosted mode, since its browser dials outside the guard.
	Crawl4AIURL string `yaml:"crawl4ai_url"`
	// ExcludeProviders names model providers that cannot use web_search
	// well; their turns do not get it.
	ExcludeProviders []string `yaml:"exclude_providers"`
}

// Provider is one model provider's connection.
type Provider struct {
	// APIKey is the key itself; prefer APIKeyEnv so the file holds no secret.
	APIKey string `yaml:"api_key"`
	// APIKeyEnv names the environment variable holding the key.
	APIKeyEnv string `yaml:"api_key_env"`
	// BaseURL overrides the provider's endpoint (OpenAI-compatible servers).
	BaseURL string `yaml:"base_url"`
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
	for i, ref := range c.TextTools {
		if _, err := ParseModelRef(ref); err != nil {
			return fmt.Errorf("text_tools[%d]: %w", i, err)
		}
	}
	switch c.Network.Mode {
	case "", "public", "self-hosted":
	default:
		return fmt.Errorf("network.mode %q: use public or self-hosted", c.Network.Mode)
	}
	if c.Web.Crawl4AIURL != "" && c.Network.Mode != "self-hosted" {
		return errors.New("web.crawl4ai_url: a Crawl4AI sidecar needs network.mode self-hosted (its browser dials outside the guard)")
	}
	if c.MaxSteps < 0 || c.MaxSteps > 1000 {
		return fmt.Errorf("max_steps %d: use 1–1000, or 0 for the default", c.MaxSteps)
	}
	return nil
}
