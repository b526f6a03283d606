package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/anthropic"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/openai"
	"github.com/quiverhq/quiver/llm/textproto"
	"github.com/quiverhq/quiver/turn"
)

// providerDefaults are the environment variables and endpoints of the
// providers Quiver knows by name.
var providerDefaults = map[string]struct{ keyEnv, baseEnv, base string }{
	"openai":     {"OPENAI_API_KEY", "OPENAI_BASE_URL", ""},
	"anthropic":  {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""},
	"gemini":     {"GEMINI_API_KEY", "GEMINI_BASE_URL", ""},
	"openrouter": {"OPENROUTER_API_KEY", "", "https://openrouter.ai/api/v1"},
	"ollama":     {"", "OLLAMA_HOST", "http://localhost:11434"},
}

// models opens llm.Models from configuration and the environment.
type models struct {
	cfg    config.Config
	getenv func(string) string
	// http is used for the Ollama probe only.
	http *http.Client
	// api sends model requests; nil means each model's own default client.
	// quiver serve shares one with a large idle pool across every turn.
	api *http.Client
}

// connection is a provider's resolved key and base URL.
type connection struct{ key, base string }

func (ms models) connection(provider string) connection {
	d := providerDefaults[provider]
	p := ms.cfg.Providers[provider]
	c := connection{key: p.APIKey, base: p.BaseURL}
	if c.key == "" && p.APIKeyEnv != "" {
		c.key = ms.getenv(p.APIKeyEnv)
	}
	if c.key == "" && d.keyEnv != "" {
		c.key = ms.getenv(d.keyEnv)
	}
	if c.key == "" && provider == "gemini" {
		c.key = ms.getenv("GOOGLE_API_KEY")
	}
	if c.base == "" && d.baseEnv != "" {
		c.base = ms.getenv(d.baseEnv)
	}
	if c.base == "" {
		c.base = d.base
	}
	return c
}

// anyKey reports whether some provider is configured at all.
func (ms models) anyKey() bool {
	for name := range providerDefaults {
		if name != "ollama" && ms.connection(name).key != "" {
			return true
		}
	}
	for name, p := range ms.cfg.Providers {
		if name != "ollama" && (p.BaseURL != "" || ms.connection(name).key != "") {
			return true
		}
	}
	return false
}

// open returns the model m names. With no provider configured at all, it
// falls back to an Ollama server on localhost:11434 when one answers, and
// otherwise says in one line how to connect a model.
func (ms models) open(ctx context.Context, m turn.Model) (llm.Model, string, error) {
	caps := m.Caps
	if m.Provider != "ollama" && !ms.configured(m.Provider) && !ms.anyKey() {
		name, err := ms.probeOllama(ctx, m)
		if err != nil {
			return nil, "", err
		}
		notice := fmt.Sprintf("no model provider is configured; using ollama:%s from %s", name, ms.connection("ollama").base)
		mod, err := ms.build(ctx, turn.Model{Provider: "ollama", Name: name}, caps)
		return mod, notice, err
	}
	mod, err := ms.build(ctx, m, caps)
	if err != nil {
		return nil, "", err
	}
	if slices.Contains(ms.cfg.TextTools, mod.Ref()) {
		mod = textproto.Wrap(mod)
	}
	return mod, "", nil
}

func (ms models) configured(provider string) bool {
	c := ms.connection(provider)
	_, custom := ms.cfg.Providers[provider]
	return c.key != "" || (custom && c.base != "")
}

const connectHelp = "set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (or a provider in --config), or start Ollama on localhost:11434"

func (ms models) build(ctx context.Context, m turn.Model, caps turn.Capabilities) (llm.Model, error) {
	c := ms.connection(m.Provider)
	switch m.Provider {
	case "anthropic":
		if c.key == "" {
			return nil, &UsageError{Msg: "anthropic:" + m.Name + " needs ANTHROPIC_API_KEY; or " + connectHelp}
		}
		return anthropic.New(anthropic.Config{APIKey: c.key, BaseURL: c.base, Model: m.Name, Caps: caps, HTTPClient: ms.api})
	case "gemini":
		if c.key == "" {
			return nil, &UsageError{Msg: "gemini:" + m.Name + " needs GEMINI_API_KEY; or " + connectHelp}
		}
		return gemini.New(ctx, gemini.Config{APIKey: c.key, BaseURL: c.base, Model: m.Name, Caps: caps, HTTPClient: ms.api})
	case "ollama":
		return openai.New(openai.Config{Provider: "ollama", BaseURL: strings.TrimSuffix(c.base, "/") + "/v1", Model: m.Name, Caps: caps, HTTPClient: ms.api})
	}
	if c.key == "" && c.base == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("%s:%s: provider %q is not configured; %s", m.Provider, m.Name, m.Provider, connectHelp)}
	}
	return openai.New(openai.Config{Provider: m.Provider, APIKey: c.key, BaseURL: c.base, Model: m.Name, Caps: caps, HTTPClient: ms.api})
}

// probeOllama asks the local Ollama server for its models and picks the
// requested one when present, else the first.
func (ms models) probeOllama(ctx context.Context, want turn.Model) (string, error) {
	base := strings.TrimSuffix(ms.connection("ollama").base, "/")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/tags", nil)
	if err != nil {
		return "", &UsageError{Msg: "no model connected: " + connectHelp}
	}
	resp, err := ms.http.Do(req)
	if err != nil {
		return "", &UsageError{Msg: "no model connected: " + connectHelp}
	}
	defer resp.Body.Close()
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tags) != nil || len(tags.Models) == 0 {
		return "", &UsageError{Msg: "no model connected: Ollama answered at " + base + " but has no models (ollama pull qwen3:8b); or " + connectHelp}
	}
	for _, m := range tags.Models {
		if m.Name == want.Name {
			return m.Name, nil
		}
	}
	return tags.Models[0].Name, nil
}

// modelHTTPClient is the client quiver serve sends every model request
// with: no overall timeout (turns stream for minutes; the turn's context
// bounds them) and an idle pool sized for many concurrent turns to the
// same provider, which the default transport's 2 idle connections per
// host would turn into a new TLS handshake for most requests.
func modelHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: t}
}
