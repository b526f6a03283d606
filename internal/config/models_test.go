package config_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/internal/config"
)

// TestContextWindow: a configured window is the model's; without one,
// its family's, Ollama's or the default; a zero reserve is left for the
// loop's default.
func TestContextWindow(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("models:\n  'lmstudio:tiny': {context_window: 8192, output_reserve: 1024}\n  'openai:gpt-4o': {output_reserve: 4096}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]agent.Window{
		"lmstudio:tiny":                         {Tokens: 8192, Reserve: 1024},
		"openai:gpt-4o":                         {Tokens: 128_000, Reserve: 4096},
		"openai:gpt-4.1-mini":                   {Tokens: 1_047_576},
		"anthropic:claude-sonnet-4-5":           {Tokens: 200_000},
		"openrouter:anthropic/claude-3.5-haiku": {Tokens: 200_000},
		"gemini:gemini-2.5-flash":               {Tokens: 1_048_576},
		"ollama:qwen3":                          {Tokens: config.OllamaWindow},
		"ollama:gpt-4o":                         {Tokens: config.OllamaWindow},
		"vllm:meta-llama/Llama-3.1-8B":          {Tokens: agent.DefaultWindow.Tokens},
		"openai:gpt-4":                          {Tokens: 8_192},
		"openai:gpt-4-0125-preview":             {Tokens: 128_000},
		"openai:gpt-4.5-preview":                {Tokens: 128_000},
		"openai:gpt-4-32k":                      {Tokens: 32_768},
	} {
		if got := cfg.ContextWindow(ref); got != want {
			t.Errorf("ContextWindow(%s) = %+v, want %+v", ref, got, want)
		}
	}
}

// TestModelsValidation: a bad entry is one clear error naming it.
func TestModelsValidation(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"models:\n  'gpt-4o': {context_window: 8192}\n", "write it as provider:model"},
		{"models:\n  'x:m': {context_window: 100}\n", "models.x:m: context_window 100: use 1024–100000000 tokens"},
		{"models:\n  'x:m': {context_window: 8192, output_reserve: 4096}\n", "models.x:m: output_reserve 4096: use 0 (the default) up to less than half of the 8192-token window"},
		{"models:\n  'ollama:m': {output_reserve: -1}\n", "output_reserve -1"},
		{"models:\n  'x:m': {context: 8192}\n", "context"},
	} {
		_, err := config.ParseConfig([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want %q", tc.yaml, err, tc.want)
		}
	}
	if _, err := config.ParseConfig([]byte("models:\n  'x:m': {context_window: 8192, output_reserve: 4095}\n")); err != nil {
		t.Errorf("a valid entry: %v", err)
	}
}
