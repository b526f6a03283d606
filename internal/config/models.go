package config

import (
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/agent"
)

// Model is what the configuration says of one model ("models:", by
// "provider:model").
type Model struct {
	// ContextWindow is the model's context window in tokens, the reply
	// included; zero means its family's (see FamilyWindow).
	ContextWindow int `yaml:"context_window"`
	// OutputReserve is the part of the window kept free for the reply;
	// zero means a quarter of the window, at most 16,384.
	OutputReserve int `yaml:"output_reserve"`
}

// Bounds of a configured context window.
const (
	MinContextWindow = 1024
	MaxContextWindow = 100_000_000
)

// Context windows of known model families, by the start of the model's
// name after any "vendor/" prefix (OpenRouter's and vLLM's names): the
// first match wins. Ollama serves what its server's num_ctx allows, which
// Quiver cannot see; any other model gets agent.DefaultWindow (128,000).
var windowFamilies = []struct {
	prefix string
	tokens int
}{
	{"claude-", 200_000},
	{"gemini-", 1_048_576},
	{"gpt-4.1", 1_047_576},
	{"gpt-5", 272_000}, // the input limit (400,000 with the reply)
	{"gpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4.5", 128_000},
	{"gpt-4-0125", 128_000},
	{"gpt-4-1106", 128_000},
	{"gpt-4-32k", 32_768},
	{"gpt-4", 8_192}, // gpt-4 and gpt-4-0613 only: every longer one is above
	{"gpt-3.5-turbo", 16_385},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4", 200_000},
}

// OllamaWindow is the context window assumed of an Ollama model: set
// context_window to the server's num_ctx (OLLAMA_CONTEXT_LENGTH) when it
// differs.
const OllamaWindow = 32_768

// FamilyWindow is the context window of the model ref ("provider:model")
// when the configuration sets none: its family's (see windowFamilies),
// OllamaWindow for any Ollama model, else agent.DefaultWindow's.
func FamilyWindow(ref string) int {
	provider, name, _ := strings.Cut(ref, ":")
	if provider == "ollama" {
		return OllamaWindow
	}
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	for _, f := range windowFamilies {
		if strings.HasPrefix(name, f.prefix) {
			return f.tokens
		}
	}
	return agent.DefaultWindow.Tokens
}

// ContextWindow is the context window of the model ref as the loop cuts
// history to (agent.Config.Windows): the configured one, else its
// family's; a zero reserve is left for the loop's default.
func (c Config) ContextWindow(ref string) agent.Window {
	m := c.Models[ref]
	w := agent.Window{Tokens: m.ContextWindow, Reserve: m.OutputReserve}
	if w.Tokens == 0 {
		w.Tokens = FamilyWindow(ref)
	}
	return w
}

// validateModels checks each entry of models: a model reference, a window
// of 0 or MinContextWindow–MaxContextWindow, and a reserve below half of
// the window in force.
func (c Config) validateModels() error {
	for ref, m := range c.Models {
		if _, err := ParseModelRef(ref); err != nil {
			return fmt.Errorf("models: %w", err)
		}
		if m.ContextWindow != 0 && (m.ContextWindow < MinContextWindow || m.ContextWindow > MaxContextWindow) {
			return fmt.Errorf("models.%s: context_window %d: use %d–%d tokens, or 0 for the family's default", ref, m.ContextWindow, MinContextWindow, MaxContextWindow)
		}
		if w := c.ContextWindow(ref).Tokens; m.OutputReserve < 0 || m.OutputReserve >= w/2 {
			return fmt.Errorf("models.%s: output_reserve %d: use 0 (the default) up to less than half of the %d-token window", ref, m.OutputReserve, w)
		}
	}
	return nil
}
