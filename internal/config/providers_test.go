package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm/providers"
)

// TestProviderConfig: every configured provider (an organisation's
// Guarded connection too), text-tool model and the network mode reach
// providers.Config as configured; none gives an empty map.
func TestProviderConfig(t *testing.T) {
	cfg := config.Config{
		Providers: map[string]config.Provider{
			"openai":   {APIKeyEnv: "MY_OPENAI_KEY"},
			"lmstudio": {APIKey: "lm-key", BaseURL: "http://127.0.0.1:1234/v1"},
			"vllm":     {BaseURL: "http://10.0.0.2:8000/v1", Guarded: true},
		},
		TextTools: []string{"lmstudio:qwen"},
		Network:   config.Network{Mode: "self-hosted"},
	}
	want := providers.Config{
		Providers: map[string]providers.Provider{
			"openai":   {APIKeyEnv: "MY_OPENAI_KEY"},
			"lmstudio": {APIKey: "lm-key", BaseURL: "http://127.0.0.1:1234/v1"},
			"vllm":     {BaseURL: "http://10.0.0.2:8000/v1", Guarded: true},
		},
		TextTools: []string{"lmstudio:qwen"},
		Network:   "self-hosted",
	}
	if diff := cmp.Diff(want, cfg.ProviderConfig()); diff != "" {
		t.Errorf("ProviderConfig (-want +got):\n%s", diff)
	}
	if got := (config.Config{}).ProviderConfig(); got.Providers == nil || len(got.Providers) != 0 || got.TextTools != nil {
		t.Errorf("ProviderConfig of no providers = %+v, want an empty map and no text tools", got)
	}
}

// TestGuardedNotFromTheFile: only an organisation's settings mark a
// provider Guarded; a config file cannot (nor turn it off by omission).
func TestGuardedNotFromTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quiver.yaml")
	if err := os.WriteFile(path, []byte("providers:\n  vllm: {base_url: \"http://10.0.0.2:8000/v1\", guarded: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.LoadConfig(path); err == nil || !strings.Contains(err.Error(), "guarded") {
		t.Errorf("a file setting guarded: %v, want refused", err)
	}
}
