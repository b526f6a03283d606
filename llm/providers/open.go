package providers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/anthropic"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/openai"
	"github.com/quiverhq/quiver/llm/textproto"
	"github.com/quiverhq/quiver/turn"
)

// ConnectError says a model cannot be opened because no provider is
// connected for it: a missing key, a provider the configuration does not
// name, or no Ollama server to fall back to. Msg says in one line how to
// connect one; it never holds a key.
type ConnectError struct{ Msg string }

// Error returns Msg.
func (e *ConnectError) Error() string { return e.Msg }

const connectHelp = "set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (or a provider in --config), or start Ollama on localhost:11434"

// Open returns the model m names, sending nothing to the provider. With no
// provider configured at all (and m not on Ollama), it asks the Ollama
// server at the Ollama base URL for its models and opens m's model there
// when Ollama has it, else Ollama's first; notice then says so in one
// line, and is "" otherwise. A model listed in Config.TextTools is wrapped
// with llm/textproto. Errors that a person fixes by connecting a model are
// *ConnectError.
//
// Anthropic and Gemini models report their adapters' own capabilities; an
// OpenAI-compatible endpoint cannot say what it supports, so its model
// reports m.Caps, the agent's declaration. See Effective.
func (s *Set) Open(ctx context.Context, m turn.Model) (mod llm.Model, notice string, err error) {
	if m.Provider != ollama && !s.Configured(m.Provider) && !s.anyConfigured() {
		name, err := s.probeOllama(ctx, m.Name)
		if err != nil {
			return nil, "", err
		}
		base := s.Connection(ollama).BaseURL
		s.cfg.Logger.Info("no model provider is configured; falling back to Ollama", "model", name, "base_url", base)
		notice = fmt.Sprintf("no model provider is configured; using ollama:%s from %s", name, base)
		mod, err := s.build(ctx, turn.Model{Provider: ollama, Name: name, Caps: m.Caps})
		return mod, notice, err
	}
	mod, err = s.build(ctx, m)
	if err != nil {
		return nil, "", err
	}
	if slices.Contains(s.cfg.TextTools, mod.Ref()) {
		mod = textproto.Wrap(mod)
	}
	return mod, "", nil
}

// Opener is s as an opener of models alone (what settings.ModelOpener
// and engine.ModelOpener ask for): its Open is Set.Open without the
// notice, which the Set's Logger records. It is safe for concurrent use.
func (s *Set) Opener() Opener { return Opener{set: s} }

// Opener opens the models of one Set; see Set.Opener.
type Opener struct{ set *Set }

// Open is Set.Open without the notice: the model, or the error (a
// *ConnectError when no provider is connected for m).
func (o Opener) Open(ctx context.Context, m turn.Model) (llm.Model, error) {
	mod, _, err := o.set.Open(ctx, m)
	return mod, err
}

// build opens m with the adapter its provider name means: anthropic and
// gemini their own, ollama and every other name OpenAI's Chat Completions
// (Ollama's under /v1).
func (s *Set) build(ctx context.Context, m turn.Model) (llm.Model, error) {
	c := s.Connection(m.Provider)
	tc := s.cfg.Tools
	if tc == nil {
		tc = &ToolCaches{}
	}
	hc := s.client(m.Provider, s.cfg.HTTPClient)
	switch m.Provider {
	case "anthropic":
		if c.Key == "" {
			return nil, &ConnectError{Msg: "anthropic:" + m.Name + " needs ANTHROPIC_API_KEY; or " + connectHelp}
		}
		return anthropic.New(anthropic.Config{APIKey: c.Key, BaseURL: c.BaseURL, Model: m.Name, HTTPClient: hc, Tools: tc.Anthropic})
	case "gemini":
		if c.Key == "" {
			return nil, &ConnectError{Msg: "gemini:" + m.Name + " needs GEMINI_API_KEY; or " + connectHelp}
		}
		return gemini.New(ctx, gemini.Config{APIKey: c.Key, BaseURL: c.BaseURL, Model: m.Name, HTTPClient: hc, Tools: tc.Gemini})
	case ollama:
		return openai.New(openai.Config{Provider: ollama, BaseURL: strings.TrimSuffix(c.BaseURL, "/") + "/v1", Model: m.Name, Caps: m.Caps, HTTPClient: hc, Tools: tc.OpenAI})
	}
	if c.Key == "" && c.BaseURL == "" {
		return nil, &ConnectError{Msg: fmt.Sprintf("%s:%s: provider %q is not configured; %s", m.Provider, m.Name, m.Provider, connectHelp)}
	}
	return openai.New(openai.Config{Provider: m.Provider, APIKey: c.Key, BaseURL: c.BaseURL, Model: m.Name, Caps: m.Caps, HTTPClient: hc, Tools: tc.OpenAI})
}
