// Package gemini is the llm.Model adapter for Google's Gemini API, on the
// official SDK (google.golang.org/genai) with streamGenerateContent over
// server-sent events.
//
// The adapter never retries: the SDK's HTTP retries and its automatic
// stream continuation are both switched off, because the agent loop owns
// retries and must see every failure once. Tool schemas are translated to
// Gemini's OpenAPI subset; CheckTool refuses, before any request, a schema
// the subset cannot express.
package gemini

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/turn"
)

// Config configures a Model.
type Config struct {
	// APIKey is the Gemini API key, sent in the x-goog-api-key header.
	// Empty lets the SDK read GEMINI_API_KEY or GOOGLE_API_KEY; New fails
	// when neither is set.
	APIKey string
	// BaseURL overrides the endpoint (a proxy, or a fake server in tests).
	// Empty means https://generativelanguage.googleapis.com/ (or the SDK's
	// GOOGLE_GEMINI_BASE_URL).
	BaseURL string
	// Model is the model name, such as "gemini-2.5-flash". Required.
	Model string
	// Caps is what Capabilities reports. The zero value means what every
	// current Gemini model can do: tools, parallel tool calls, vision, video
	// and structured output. Any other value is reported as given.
	Caps turn.Capabilities
	// HTTPClient sends the requests; nil means a new default client. Its
	// Timeout, if any, bounds a whole stream: prefer a context deadline.
	HTTPClient *http.Client
	// Tools keeps the tools' declarations built (their schemas
	// translated) once per list of definitions, shared by the models
	// given it; nil builds them on every call. The request is the same
	// either way.
	Tools *ToolCache
}

// Model is a Gemini model. It is safe for concurrent use.
type Model struct {
	client *genai.Client
	model  string
	caps   turn.Capabilities
	tools  *ToolCache
	key    string // only to redact it from error messages
}

// New returns the model cfg describes. It makes no request.
func New(ctx context.Context, cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("gemini: no model name")
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: cfg.HTTPClient,
		HTTPOptions: genai.HTTPOptions{
			BaseURL: cfg.BaseURL,
			// One attempt: the agent loop retries, honouring Retry-After.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	})
	if err != nil {
		// The SDK's message may print its whole config, key included.
		return nil, errors.New("gemini: " + redact(err.Error(), cfg.APIKey))
	}
	caps := cfg.Caps
	if caps == (turn.Capabilities{}) {
		caps = turn.Capabilities{Tools: true, ParallelTools: true, Vision: true, Video: true, StructuredOutput: true}
	}
	return &Model{client: client, model: cfg.Model, caps: caps, tools: cfg.Tools, key: client.ClientConfig().APIKey}, nil
}

// Ref returns "gemini:" and the model name.
func (m *Model) Ref() string { return "gemini:" + m.model }

// Capabilities returns Config.Caps, or the Gemini defaults.
func (m *Model) Capabilities() turn.Capabilities { return m.caps }

// CheckTool reports a declaration Gemini cannot take: a function name
// outside its alphabet, or a schema outside its subset. The error is an
// *llm.Error of kind ErrUnsupportedTool naming the keyword and its JSON
// pointer. A nil answer means Stream will send the tool.
func (m *Model) CheckTool(d llm.ToolDef) error { return m.tools.Check(d, checkTool) }

// checkTool is CheckTool's check: the translation of the declaration.
func checkTool(d llm.ToolDef) error {
	_, err := declaration(d)
	return err
}

// Stream sends req and yields its events, ending with exactly one EventDone
// or an error (an *llm.Error, or one wrapping the context's error when ctx
// ends). A reply that ends without Gemini's finish reason is an error.
// Stopping the iteration early cancels the request.
func (m *Model) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		contents, config, err := buildRequest(req, m.tools)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var r reply
		for chunk, err := range m.client.Models.GenerateContentStream(ctx, m.model, contents, config) {
			if err == nil && req.Progress != nil {
				req.Progress()
			}
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				yield(llm.Event{}, m.streamError(ctx, err))
				return
			}
			if !r.chunk(chunk, yield) {
				return
			}
		}
		r.end(yield)
	}
}

// redact removes key from msg.
func redact(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[redacted]")
}
