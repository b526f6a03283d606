package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/genai"

	"github.com/quiverhq/quiver/llm"
)

// Gemini's roles for contents.
const (
	roleUser  = "user"
	roleModel = "model"
)

// buildRequest maps req to the SDK's contents and config. Errors are
// *llm.Error: ErrUnsupportedTool for a tool CheckTool would refuse,
// ErrBadRequest for a conversation that cannot be encoded.
//
// Request.CacheKey has no Gemini counterpart: Gemini caches repeated
// prefixes implicitly, and reports the cached part in usage.
//
// tools, when not nil, keeps the declarations built per list of
// definitions.
func buildRequest(req llm.Request, tools *ToolCache) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	contents, err := buildContents(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	config := &genai.GenerateContentConfig{
		// The SDK would otherwise re-send the request to continue a stream
		// that stopped early; the loop decides about retries.
		AutomaticContinuation: genai.Ptr(false),
	}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Role: roleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxTokens > 0 {
		config.MaxOutputTokens = int32(min(req.MaxTokens, math.MaxInt32))
	}
	if len(req.Tools) > 0 {
		tool, err := tools.List(req.Tools, buildTool)
		if err != nil {
			return nil, nil, err
		}
		config.Tools = []*genai.Tool{tool}
	}
	return contents, config, nil
}

// ToolCache keeps tool declarations as Gemini requests carry them
// (llm.DeclCache): each list of definitions is built, its schemas
// translated, once, and shared by every model given the cache, and each
// definition is checked once. The SDK reads a request's tools and never
// changes them. It is safe for concurrent use.
type ToolCache = llm.DeclCache[*genai.Tool]

// NewToolCache returns a cache of at most max definition lists; max <= 0
// means llm.DefaultToolCacheEntries.
func NewToolCache(max int) *ToolCache { return llm.NewDeclCache[*genai.Tool](max) }

// buildTool declares all tools in one Tool, in order.
func buildTool(defs []llm.ToolDef) (*genai.Tool, error) {
	decls := make([]*genai.FunctionDeclaration, len(defs))
	for i, d := range defs {
		fd, err := declaration(d)
		if err != nil {
			return nil, err
		}
		decls[i] = fd
	}
	return &genai.Tool{FunctionDeclarations: decls}, nil
}

// buildContents maps each message to one content. A message with nothing
// to send (no text, images, calls or results) is left out: Gemini rejects a
// content without parts.
func buildContents(msgs []llm.Message) ([]*genai.Content, error) {
	contents := make([]*genai.Content, 0, len(msgs))
	for i, msg := range msgs {
		c, err := buildContent(msg)
		if err != nil {
			return nil, &llm.Error{Kind: llm.ErrBadRequest, Msg: fmt.Sprintf("gemini: message %d: %v", i, err)}
		}
		if len(c.Parts) > 0 {
			contents = append(contents, c)
		}
	}
	return contents, nil
}

func buildContent(msg llm.Message) (*genai.Content, error) {
	switch msg.Role {
	case llm.User:
		return userContent(msg), nil
	case llm.Assistant:
		return modelContent(msg)
	case llm.Tool:
		return resultsContent(msg), nil
	}
	return nil, fmt.Errorf("unknown role %q", msg.Role)
}

// userContent puts images before the text, as Gemini's prompting guide
// advises.
func userContent(msg llm.Message) *genai.Content {
	parts := make([]*genai.Part, 0, len(msg.Images)+1)
	for _, img := range msg.Images {
		parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: img.MIME, Data: img.Data}})
	}
	if msg.Text != "" {
		parts = append(parts, &genai.Part{Text: msg.Text})
	}
	return &genai.Content{Role: roleUser, Parts: parts}
}

func modelContent(msg llm.Message) (*genai.Content, error) {
	parts := make([]*genai.Part, 0, len(msg.ToolCalls)+1)
	if msg.Text != "" {
		parts = append(parts, &genai.Part{Text: msg.Text})
	}
	for _, call := range msg.ToolCalls {
		args, err := callArgs(call.Args)
		if err != nil {
			return nil, fmt.Errorf("tool call %s (%s): %w", call.ID, call.Name, err)
		}
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: call.ID, Name: llm.SentName(call.Name), Args: args}, ThoughtSignature: call.Signature})
	}
	return &genai.Content{Role: roleModel, Parts: parts}, nil
}

// callArgs decodes a call's arguments, which Gemini takes as an object.
// Empty arguments are the empty object.
func callArgs(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	if args == nil { // "null"
		args = map[string]any{}
	}
	return args, nil
}

// resultsContent answers calls with functionResponse parts in one user
// content: {"output": content}, or {"error": content} for a failed call,
// which is how Gemini tells the two apart.
func resultsContent(msg llm.Message) *genai.Content {
	parts := make([]*genai.Part, len(msg.Results))
	for i, r := range msg.Results {
		key := "output"
		if r.IsError {
			key = "error"
		}
		fr := &genai.FunctionResponse{ID: r.CallID, Name: llm.SentName(r.Name), Response: map[string]any{key: r.Content}}
		// A result's images travel in the response itself, as a
		// multimodal function response's inlineData parts.
		for _, img := range r.Images {
			fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: img.MIME, Data: img.Data}})
		}
		parts[i] = &genai.Part{FunctionResponse: fr}
	}
	return &genai.Content{Role: roleUser, Parts: parts}
}
