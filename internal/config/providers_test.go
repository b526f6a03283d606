package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/providers"
)

// TestProviderConfig: every configured provider and text-tool model
// reaches providers.Config as configured; none gives an empty map.
func TestProviderConfig(t *testing.T) {
	cfg := config.Config{
		Providers: map[string]config.Provider{
			"openai":   {APIKeyEnv: "MY_OPENAI_KEY"},
			"lmstudio": {APIKey: "lm-key", BaseURL: "http://127.0.0.1:1234/v1"},
		},
		TextTools: []string{"lmstudio:qwen"},
	}
	want := providers.Config{
		Providers: map[string]providers.Provider{
			"openai":   {APIKeyEnv: "MY_OPENAI_KEY"},
			"lmstudio": {APIKey: "lm-key", BaseURL: "http://127.0.0.1:1234/v1"},
		},
		TextTools: []string{"lmstudio:qwen"},
	}
	if diff := cmp.Diff(want, cfg.ProviderConfig()); diff != "" {
		t.Errorf("ProviderConfig (-want +got):\n%s", diff)
	}
	if got := (config.Config{}).ProviderConfig(); got.Providers == nil || len(got.Providers) != 0 || got.TextTools != nil {
		t.Errorf("ProviderConfig of no providers = %+v, want an empty map and no text tools", got)
	}
}
