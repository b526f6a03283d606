// Package llm is Quiver's provider-neutral view of a chat model: messages,
// tool declarations, streaming events, usage and errors. Adapters in
// llm/openai, llm/anthropic and llm/gemini translate it to each provider's
// official SDK; the agent loop only ever sees this package.
package llm

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Role is who wrote a message.
type Role string

// Roles of a conversation. The system prompt is not a message: it travels
// in Request.System.
const (
	User      Role = "user"
	Assistant Role = "assistant"
	// Tool messages carry the results of the preceding assistant message's
	// tool calls.
	Tool Role = "tool"
)

// Image is an image given to a vision model: the type tool results carry,
// so a result's images reach the adapters unconverted.
type Image = tool.Image

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	// Signature is opaque provider data that must go back with the call in
	// later requests of the same turn (Gemini's thought signature). Adapters
	// that have none leave it nil and ignore it.
	Signature []byte `json:"signature,omitempty"`
}

// UnnamedCall is the name an adapter sends back, in a later request's
// history, for a call the model made without a name (ToolCall.Name
// empty; the loop answered it with a refusal): providers require every
// call in the history to be named.
const UnnamedCall = "unnamed_call"

// SentName is name as an adapter sends a call's (or its result's) name
// back to the provider: UnnamedCall for a blank one, else name.
func SentName(name string) string {
	if strings.TrimSpace(name) == "" {
		return UnnamedCall
	}
	return name
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Images are the result's images (tool.Result.Images), set only for
	// a model with vision; each adapter sends them in its provider's
	// form for images in a tool result.
	Images []Image `json:"images,omitempty"`
	// References name deferred tools (Request.Deferred) this result
	// loads into the model's context from the next step on; only for a
	// model whose capabilities include DeferredTools.
	References []string `json:"references,omitempty"`
}

// Message is one entry of the conversation sent to a model.
//   - User: Text and optional Images.
//   - Assistant: Text and/or ToolCalls.
//   - Tool: Results, one per call of the preceding assistant message, in
//     call order.
type Message struct {
	Role      Role
	Text      string
	Images    []Image
	ToolCalls []ToolCall
	Results   []ToolResult
}

// ToolDef is a tool as declared to a model.
type ToolDef = tool.Declaration

// Request is one model call.
type Request struct {
	// System is the system prompt: the cache-stable prefix.
	System string
	// Messages are the conversation, oldest first; the turn's context
	// message is the first user message of the turn.
	Messages []Message
	// Tools are declared in this order.
	Tools []ToolDef
	// Deferred are tools sent for the provider to load only when a tool
	// result references them (ToolResult.References), after Tools; only
	// for a model whose capabilities include DeferredTools. They are not
	// in the model's context, and loading one changes no byte of the
	// prefix.
	Deferred []ToolDef
	// CacheKey groups requests that share a prefix (one per agent), for
	// providers with a prompt-cache key. Empty means none.
	CacheKey string
	// MaxTokens bounds the reply; zero means the adapter's default.
	MaxTokens int
	// Progress, when set, is called for every event the provider sends,
	// before the adapter handles it, including those that complete no
	// Event (a tool call's argument delta, thinking, a keep-alive): a
	// watch of the stream's silence resets on it. It is called on the
	// goroutine iterating the stream.
	Progress func()
}

// Usage is what one model call consumed, in tokens.
type Usage struct {
	InputTokens int64 `json:"input_tokens"`
	// CachedInputTokens is the part of InputTokens read from the cache.
	CachedInputTokens int64 `json:"cached_input_tokens"`
	// CacheWriteTokens is the part of InputTokens written to the cache.
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + v.InputTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + v.CacheWriteTokens,
		OutputTokens:      u.OutputTokens + v.OutputTokens,
	}
}

// Model is a chat model behind some provider. Implementations are safe for
// concurrent use.
type Model interface {
	// Ref returns the model's "provider:model" reference.
	Ref() string
	// Capabilities returns what the model can do: the provider's own
	// knowledge of it, or what its configuration claims where the provider
	// cannot tell (an OpenAI-compatible endpoint). A turn runs with these
	// combined with the agent's declaration (see providers.Effective).
	Capabilities() turn.Capabilities
	// CheckTool reports, before any request, a declaration the provider
	// cannot take (a schema outside its subset). Nil means it can.
	CheckTool(ToolDef) error
	// Stream sends req and yields its events in order, ending with exactly
	// one EventDone — or with a non-nil error, after which nothing follows.
	// Errors are *Error where the provider said something meaningful.
	// Stopping the iteration early cancels the request.
	Stream(ctx context.Context, req Request) iter.Seq2[Event, error]
}
