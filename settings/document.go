package settings

import "regexp"

// document is an organisation's settings document as stored. It holds only
// what differs from the deployment's configuration at save time: an absent
// (nil, "") field follows the deployment, so an operator's later change
// reaches every organisation that did not choose otherwise.
type document struct {
	Switches map[string]bool `json:"switches"`
	// NetworkMode is "" to follow the deployment.
	NetworkMode string `json:"network_mode,omitempty"`
	Web         webDoc `json:"web"`
	// Connections are the organisation's own OpenAI-compatible servers:
	// base URL by provider name (their keys are sealed secrets named
	// "connection:NAME"); nil for none.
	Connections map[string]string `json:"connections,omitempty"`
}

// webDoc is the web engines' part of document; nil follows the
// deployment.
type webDoc struct {
	Disabled           *bool     `json:"disabled,omitempty"`
	SearXNGURL         *string   `json:"searxng_url,omitempty"`
	IAskURL            *string   `json:"iask_url,omitempty"`
	DuckDuckGoDisabled *bool     `json:"duckduckgo_disabled,omitempty"`
	ExcludeProviders   *[]string `json:"exclude_providers,omitempty"`
}

// override returns nil when v equals the deployment's value, else &v.
func override[T comparable](v, base T) *T {
	if v == base {
		return nil
	}
	return &v
}

// or returns *p, or base when p is nil.
func or[T any](p *T, base T) T {
	if p == nil {
		return base
	}
	return *p
}

// keySpec is one write-only key an organisation may store.
type keySpec struct {
	name, label string
	// provider is the model provider the key is for; "" for engines.
	provider string
}

// keySpecs are the keys the settings know, in the order the UI lists them.
var keySpecs = []keySpec{
	{"openai_api_key", "OpenAI API key", "openai"},
	{"anthropic_api_key", "Anthropic API key", "anthropic"},
	{"gemini_api_key", "Gemini API key", "gemini"},
	{"openrouter_api_key", "OpenRouter API key", "openrouter"},
	{"brave_api_key", "Brave Search API key", ""},
	{"iask_api_key", "IAsk API key", ""},
}

// Limits on settings values.
const (
	maxKeyLen = 500
	maxURLLen = 500
)

// providerName is what exclude_providers may hold: a model provider's
// name, as in an agent's "provider:model".
var providerName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// SecretAAD binds a sealed settings key to its organisation and name: the
// additional data every Seal, Open and Rotate of that key must use.
func SecretAAD(orgID, name string) []byte { return []byte("settings:" + orgID + ":" + name) }
