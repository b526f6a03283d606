// Package openai adapts OpenAI's Chat Completions API, and the many servers
// that copy it (Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter), to
// llm.Model, on the official SDK github.com/openai/openai-go/v3.
//
// Every call streams (stream: true, stream_options.include_usage: true).
// The SDK's own retries are off: the agent loop decides what to retry, from
// the *llm.Error this package returns.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// DefaultBaseURL is OpenAI's API root, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Model. Only Model is required.
type Config struct {
	// APIKey is sent as a bearer token. Empty sends no Authorization
	// header, which local servers such as Ollama accept. The environment is
	// never read here: an OPENAI_API_KEY must not reach another provider's
	// base URL by accident.
	APIKey string
	// BaseURL is the API root the path "chat/completions" is joined to, e.g.
	// "http://localhost:11434/v1" for Ollama. Empty means DefaultBaseURL.
	BaseURL string
	// Model is the provider's model name ("gpt-4.1-mini", "qwen3:8b").
	Model string
	// Caps is what the model can do, as configured; the zero value claims
	// nothing (not even tools).
	Caps turn.Capabilities
	// HTTPClient sends the requests. Nil means a client of the model's own
	// on http.DefaultTransport, with no timeout: the caller's context
	// bounds each call.
	HTTPClient *http.Client
	// Provider is the prefix of Ref ("ollama", "openrouter", "vllm", ...).
	// Empty means "openai".
	Provider string
	// Tools keeps the tools' declarations built and encoded once per
	// list of definitions, shared by the models given it; nil builds
	// them on every call. The bytes sent are the same either way.
	Tools *ToolCache
}

// Model is a Chat Completions model. It is safe for concurrent use.
type Model struct {
	cfg  Config
	chat sdk.ChatCompletionService
	// redact hides the key in provider messages.
	redact *regexp.Regexp
	now    func() time.Time
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg. It fails when cfg.Model is empty or
// cfg.BaseURL is not an http(s) URL; it sends nothing.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: no model name")
	}
	if cfg.Provider == "" {
		cfg.Provider = "openai"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Model{
		cfg:    cfg,
		chat:   sdk.NewChatCompletionService(opts...),
		redact: secretPattern(cfg.APIKey),
		now:    clock.Now,
	}, nil
}

// Ref returns "provider:model", e.g. "openai:gpt-4.1-mini".
func (m *Model) Ref() string { return m.cfg.Provider + ":" + m.cfg.Model }

// Capabilities returns Config.Caps.
func (m *Model) Capabilities() turn.Capabilities { return m.cfg.Caps }

// toolName is what OpenAI accepts as a function name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// CheckTool accepts any declaration whose name OpenAI takes and whose
// parameters are a JSON object schema ("type": "object"); anything else is
// an *llm.Error of Kind ErrUnsupportedTool. With Config.Tools, each
// definition is checked once.
func (m *Model) CheckTool(d llm.ToolDef) error { return m.cfg.Tools.Check(d, checkTool) }

// checkTool is CheckTool's check.
func checkTool(d llm.ToolDef) error {
	if !toolName.MatchString(d.Name) {
		return unsupported(d.Name, "the name must match ^[a-zA-Z0-9_-]{1,64}$")
	}
	var schema struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(d.Parameters, &schema); err != nil {
		return unsupported(d.Name, "the parameters are not a JSON object schema")
	}
	if schema.Type != "object" {
		return unsupported(d.Name, `the parameters schema must have "type": "object"`)
	}
	return nil
}

func unsupported(name, why string) error {
	return &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("tool %q: %s", name, why)}
}

// Stream sends req and yields its events; see llm.Model. Errors are
// *llm.Error, except that a cancelled or expired ctx gives an error that
// wraps ctx.Err().
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var res *http.Response
		s := m.chat.NewStreaming(ctx, params, option.WithResponseInto(&res))
		defer s.Close()
		for ev, err := range translate(progressChunks{s, req.Progress}) {
			if err == nil && ctx.Err() != nil {
				err = ctx.Err()
			}
			if err != nil {
				yield(llm.Event{}, m.classify(ctx, err, res))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
