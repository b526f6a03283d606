package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/quiverhq/quiver/llm"
)

// errorPrefix marks a failed tool's result: Chat Completions has no error
// flag on tool messages, so the model reads it from the content.
const errorPrefix = "Error: "

// params translates req to a streaming Chat Completions request.
func (m *Model) params(req llm.Request) (sdk.ChatCompletionNewParams, error) {
	msgs, err := messages(req)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	declared, err := m.declared(req.Tools)
	if err != nil {
		return sdk.ChatCompletionNewParams{}, err
	}
	p := sdk.ChatCompletionNewParams{
		Model:         m.cfg.Model,
		Messages:      msgs,
		Tools:         declared,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.CacheKey != "" {
		p.PromptCacheKey = sdk.String(req.CacheKey)
	}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
	}
	return p, nil
}

// messages lays out the conversation: the system prompt first, then one
// message per user or assistant message and one per tool result.
func messages(req llm.Request) ([]sdk.ChatCompletionMessageParamUnion, error) {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, sdk.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.User:
			out = append(out, userMessage(msg))
		case llm.Assistant:
			out = append(out, assistantMessage(msg))
		case llm.Tool:
			for _, r := range msg.Results {
				out = append(out, toolMessage(r))
			}
			if m, ok := toolImagesMessage(msg.Results); ok {
				out = append(out, m)
			}
		default:
			return nil, &llm.Error{Kind: llm.ErrBadRequest, Msg: fmt.Sprintf("message %d: unknown role %q", i, msg.Role)}
		}
	}
	return out, nil
}

func userMessage(msg llm.Message) sdk.ChatCompletionMessageParamUnion {
	if len(msg.Images) == 0 {
		return sdk.UserMessage(msg.Text)
	}
	parts := make([]sdk.ChatCompletionContentPartUnionParam, 0, len(msg.Images)+1)
	if msg.Text != "" {
		parts = append(parts, sdk.TextContentPart(msg.Text))
	}
	for _, img := range msg.Images {
		parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: dataURL(img)}))
	}
	return sdk.UserMessage(parts)
}

// dataURL inlines an image, so no file upload or public URL is needed.
func dataURL(img llm.Image) string {
	return "data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

func assistantMessage(msg llm.Message) sdk.ChatCompletionMessageParamUnion {
	var a sdk.ChatCompletionAssistantMessageParam
	if msg.Text != "" {
		a.Content.OfString = sdk.String(msg.Text)
	}
	for _, c := range msg.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: llm.SentName(c.Name), Arguments: arguments(c.Args)},
			},
		})
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// arguments is a call's arguments as the wire's JSON-in-a-string; a call
// without any is an empty object.
func arguments(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	return string(args)
}

// ToolImagesHeader opens the user message that carries tool results'
// images. Chat Completions takes text only in a tool message, so the
// images follow the call's tool messages in one user message (the usual
// workaround): this line, then for each result with images a line
// "Call <id> (<name>):" and its images as image_url parts.
const ToolImagesHeader = "Images from the tool results above (a tool message carries text only):"

// toolImagesMessage is that user message, or false when no result has
// images.
func toolImagesMessage(results []llm.ToolResult) (sdk.ChatCompletionMessageParamUnion, bool) {
	var parts []sdk.ChatCompletionContentPartUnionParam
	for _, r := range results {
		if len(r.Images) == 0 {
			continue
		}
		if parts == nil {
			parts = append(parts, sdk.TextContentPart(ToolImagesHeader))
		}
		parts = append(parts, sdk.TextContentPart("Call "+r.CallID+" ("+llm.SentName(r.Name)+"):"))
		for _, img := range r.Images {
			parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: dataURL(img)}))
		}
	}
	if parts == nil {
		return sdk.ChatCompletionMessageParamUnion{}, false
	}
	return sdk.UserMessage(parts), true
}

func toolMessage(r llm.ToolResult) sdk.ChatCompletionMessageParamUnion {
	content := r.Content
	if r.IsError {
		content = errorPrefix + content
	}
	return sdk.ToolMessage(content, r.CallID)
}

// tools declares each tool as a function. The parameters schema is sent
// byte for byte as declared, not re-encoded through a map, so the request
// prefix stays what the prompt cache saw last time.
func tools(defs []llm.ToolDef) []sdk.ChatCompletionToolUnionParam {
	if len(defs) == 0 {
		return nil
	}
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(defs))
	for _, d := range defs {
		fn := shared.FunctionDefinitionParam{Name: d.Name}
		if d.Description != "" {
			fn.Description = sdk.String(d.Description)
		}
		if len(d.Parameters) > 0 {
			fn.SetExtraFields(map[string]any{"parameters": d.Parameters})
		}
		out = append(out, sdk.ChatCompletionFunctionTool(fn))
	}
	return out
}

// ToolCache keeps tool declarations as Chat Completions requests carry
// them (llm.DeclCache): each list of definitions is built and encoded
// once, then sent as those bytes by every model given the cache, and
// each definition is checked once. It is safe for concurrent use.
type ToolCache = llm.DeclCache[[]sdk.ChatCompletionToolUnionParam]

// NewToolCache returns a cache of at most max definition lists; max <= 0
// means llm.DefaultToolCacheEntries.
func NewToolCache(max int) *ToolCache {
	return llm.NewDeclCache[[]sdk.ChatCompletionToolUnionParam](max)
}

// declared is the request's tools: from Config.Tools when it holds the
// definitions, encoded once (encodedTools); without a cache, tools.
func (m *Model) declared(defs []llm.ToolDef) ([]sdk.ChatCompletionToolUnionParam, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	if m.cfg.Tools == nil {
		return tools(defs), nil
	}
	return m.cfg.Tools.List(defs, encodedTools)
}

// encodedTools is tools with each declaration encoded by the SDK once
// and carried as those bytes (llm.EncodeOnce). Parameters that are not
// JSON are an ErrBadRequest, as the SDK's encoding would be when sending.
func encodedTools(defs []llm.ToolDef) ([]sdk.ChatCompletionToolUnionParam, error) {
	out := tools(defs)
	err := llm.EncodeOnce(out, param.Override[sdk.ChatCompletionToolUnionParam], func(i int, err error) error {
		return &llm.Error{Kind: llm.ErrBadRequest, Msg: fmt.Sprintf("tool %q: the parameters cannot be encoded: %v", defs[i].Name, err)}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
