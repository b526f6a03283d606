// Package anthropic adapts Anthropic's Messages API, through the official
// SDK, to llm.Model: streaming replies with tool calls, prompt-cache
// breakpoints after the tool definitions and the system prompt, cache usage
// read back, and provider errors classified as *llm.Error.
package anthropic

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"os"
	"regexp"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// DefaultMaxTokens bounds a reply when neither the Config nor the Request
// does: Anthropic requires max_tokens on every request.
const DefaultMaxTokens = 4096

// Config configures a Model.
type Config struct {
	// APIKey is sent as the x-api-key header. Empty means the
	// ANTHROPIC_API_KEY environment variable; if that is empty too, no key
	// is sent (a gateway may not need one; Anthropic answers ErrAuth).
	APIKey string
	// BaseURL is the API's root, without /v1. Empty means the
	// ANTHROPIC_BASE_URL environment variable, else https://api.anthropic.com.
	BaseURL string
	// Model is the model name ("claude-sonnet-4-5"); required.
	Model string
	// Caps are what the model can do. The zero value means what every
	// current Claude model does: tools, parallel tool calls and vision.
	Caps turn.Capabilities
	// HTTPClient sends the requests. Nil means the SDK's default client.
	HTTPClient *http.Client
	// MaxTokens bounds each reply when the Request does not. Zero means
	// DefaultMaxTokens.
	MaxTokens int
	// Tools keeps the tools' declarations built and encoded once per
	// list of definitions, shared by the models given it; nil builds
	// them on every call. The bytes sent are the same either way.
	Tools *ToolCache
}

// Model is a Claude model behind Anthropic's Messages API. It implements
// llm.Model and is safe for concurrent use.
type Model struct {
	client    anthropic.Client
	name      string
	caps      turn.Capabilities
	maxTokens int
	tools     *ToolCache
	now       func() time.Time
}

// New returns the model cfg describes. It fails only when cfg.Model is
// empty; a missing or wrong key shows on the first request, as ErrAuth.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: new model: Config.Model is empty")
	}
	m := &Model{
		client:    anthropic.NewClient(clientOptions(cfg)...),
		name:      cfg.Model,
		caps:      cfg.Caps,
		maxTokens: cfg.MaxTokens,
		tools:     cfg.Tools,
		now:       clock.Now,
	}
	if m.caps == (turn.Capabilities{}) {
		m.caps = turn.Capabilities{Tools: true, ParallelTools: true, Vision: true, DeferredTools: toolSearchModel.MatchString(cfg.Model)}
	}
	if m.maxTokens <= 0 {
		m.maxTokens = DefaultMaxTokens
	}
	return m, nil
}

// clientOptions resolves the key and base URL here, not in the SDK, so the
// SDK's wider credential chain (profiles, federation, auth tokens) never
// picks a credential the user did not configure.
func clientOptions(cfg Config) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		// The agent loop retries, honouring Retry-After; two layers of
		// retries would multiply the wait and hide the errors.
		option.WithMaxRetries(0),
	}
	key := cfg.APIKey
	if key == "" {
		key = os.Getenv("ANTHROPIC_API_KEY")
	}
	if key != "" {
		opts = append(opts, option.WithHeader("x-api-key", key))
	}
	base := cfg.BaseURL
	if base == "" {
		base = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return opts
}

// Ref returns "anthropic:" followed by the model name.
func (m *Model) Ref() string { return "anthropic:" + m.name }

// toolSearchModel matches the models that take deferred tools
// (defer_loading with tool_reference results): Claude Sonnet and Opus
// from 4.5 on, and any later generation.
var toolSearchModel = regexp.MustCompile(`^claude-(?:(?:opus|sonnet)-4-(?:[5-9]|\d\d)|(?:opus|sonnet|haiku)-(?:[5-9]|\d\d))(?:[-.@]|$)`)

// Capabilities returns the configured capabilities.
func (m *Model) Capabilities() turn.Capabilities { return m.caps }

// Stream sends req to the Messages API with streaming and yields its
// events: text deltas, tool-call starts, complete tool calls, the combined
// usage, then exactly one EventDone. It yields a non-nil error instead on
// an HTTP error, an error event, a malformed event, or a stream that ends
// before message_stop; errors are *llm.Error, except cancellation, which
// wraps ctx's error. Stopping the iteration early cancels the request and
// closes the stream.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		m.drain(ctx, m.client.Messages.NewStreaming(ctx, params), req.Progress, yield)
	}
}
