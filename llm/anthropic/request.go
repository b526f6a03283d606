package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/quiverhq/quiver/llm"
)

// params translates a neutral request to the Messages API's. Prompt-cache
// breakpoints go on the last tool and the last system block: Anthropic
// caches the prefix up to each breakpoint, in the order tools, system,
// messages, so the tool definitions and the system prompt — stable across
// a conversation — are read from the cache on every step after the first.
func (m *Model) params(req llm.Request) (anthropic.MessageNewParams, error) {
	tools, err := m.declared(req.Tools)
	if err != nil {
		return anthropic.MessageNewParams{}, err
	}
	if len(req.Deferred) > 0 {
		deferred, err := deferredParams(req.Deferred)
		if err != nil {
			return anthropic.MessageNewParams{}, err
		}
		tools = append(slices.Clip(tools), deferred...)
	}
	p := anthropic.MessageNewParams{
		Model:     m.name,
		MaxTokens: int64(m.maxTokens),
		System:    systemBlocks(req.System),
		Messages:  messageParams(req.Messages),
		Tools:     tools,
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	return p, nil
}

func systemBlocks(system string) []anthropic.TextBlockParam {
	if system == "" {
		return nil
	}
	return []anthropic.TextBlockParam{{Text: system, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
}

// toolParams declares the tools in order, the last one carrying the cache
// breakpoint that covers them all.
func toolParams(defs []llm.ToolDef) ([]anthropic.ToolUnionParam, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	out := make([]anthropic.ToolUnionParam, len(defs))
	for i, d := range defs {
		schema, err := inputSchema(d.Parameters)
		if err != nil {
			return nil, &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("anthropic: tool %q: %v", d.Name, err)}
		}
		t := &anthropic.ToolParam{Name: d.Name, InputSchema: schema}
		if d.Description != "" {
			t.Description = anthropic.String(d.Description)
		}
		out[i] = anthropic.ToolUnionParam{OfTool: t}
	}
	out[len(out)-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	return out, nil
}

// deferredParams declares deferred tools (llm.Request.Deferred), after
// the others: each marked defer_loading, so it stays out of the model's
// context, and of the cached prefix, until a tool result references it
// (a tool_reference block). None carries a cache breakpoint: the one on
// the last tool declared whole covers the prefix. They are encoded per
// request, not kept in the ToolCache, whose lists carry the breakpoint.
func deferredParams(defs []llm.ToolDef) ([]anthropic.ToolUnionParam, error) {
	out := make([]anthropic.ToolUnionParam, len(defs))
	for i, d := range defs {
		schema, err := inputSchema(d.Parameters)
		if err != nil {
			return nil, &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("anthropic: tool %q: %v", d.Name, err)}
		}
		t := &anthropic.ToolParam{Name: d.Name, InputSchema: schema, DeferLoading: anthropic.Bool(true)}
		if d.Description != "" {
			t.Description = anthropic.String(d.Description)
		}
		out[i] = anthropic.ToolUnionParam{OfTool: t}
	}
	return out, nil
}

// inputSchema carries a JSON schema object over: properties, required
// and type where the SDK puts them, then every other keyword in the
// order the schema declares it, each value as given (compacted, with
// HTML characters escaped, as the SDK escapes every field). The result
// is the schema's encoded bytes (param.Override): the SDK encodes extra
// keywords in a map's order, which is random, so a schema with two of
// them (additionalProperties and $defs) was sent in another order on
// each request, and the provider's prompt cache, which compares bytes,
// missed. Nothing is reinterpreted; a repeated keyword keeps its last
// value, as decoding into a map would.
func inputSchema(params json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(params) == 0 {
		return s, nil
	}
	keys, values, err := objectFields(params)
	if err != nil {
		return s, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(key string, value []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(value)
	}
	if t, ok := values["type"]; ok && string(t) != `"object"` {
		return s, fmt.Errorf("parameters have type %s, want \"object\"", t)
	}
	if p, ok := values["properties"]; ok {
		field("properties", p)
	}
	if r, ok := values["required"]; ok {
		var names []string
		if err := json.Unmarshal(r, &names); err != nil {
			return s, fmt.Errorf("parameters: required is not a list of names")
		}
		if names != nil {
			enc, _ := json.Marshal(names)
			field("required", enc)
		}
	}
	field("type", []byte(`"object"`))
	for _, k := range keys {
		switch k {
		case "type", "properties", "required":
		default:
			field(k, values[k])
		}
	}
	b.WriteByte('}')
	return param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(b.Bytes())), nil
}

// objectFields are a JSON object's keys in the order they first appear
// and each one's last value, compacted with HTML characters escaped
// (json.Marshal of the raw value); an error when params is not an
// object.
func objectFields(params json.RawMessage) ([]string, map[string][]byte, error) {
	notObject := fmt.Errorf("parameters are not a JSON object")
	dec := json.NewDecoder(bytes.NewReader(params))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, notObject
	}
	var keys []string
	values := map[string][]byte{}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil, nil, notObject
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, notObject
		}
		enc, err := json.Marshal(raw)
		if err != nil {
			return nil, nil, notObject
		}
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = enc
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, notObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, notObject
	}
	return keys, values, nil
}

// messageParams translates the conversation, merging consecutive messages
// of one wire role: Anthropic requires user and assistant to alternate,
// and tool results travel in a user message.
func messageParams(msgs []llm.Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	var role llm.Role
	var blocks []anthropic.ContentBlockParamUnion
	flush := func() {
		if len(blocks) == 0 {
			return
		}
		if role == llm.Assistant {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
		blocks = nil
	}
	for _, msg := range msgs {
		r := wireRole(msg.Role)
		if r != role {
			flush()
			role = r
		}
		blocks = append(blocks, contentBlocks(msg)...)
	}
	flush()
	return out
}

// wireRole is the role a message travels as: tool results are user content.
func wireRole(r llm.Role) llm.Role {
	if r == llm.Assistant {
		return llm.Assistant
	}
	return llm.User
}

// contentBlocks translates one message. Empty text is left out: the API
// refuses empty text blocks.
func contentBlocks(msg llm.Message) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, r := range msg.Results {
		out = append(out, toolResultBlock(r))
	}
	// Images go before the text that refers to them, as Anthropic advises.
	for _, img := range msg.Images {
		out = append(out, anthropic.NewImageBlockBase64(img.MIME, base64.StdEncoding.EncodeToString(img.Data)))
	}
	if msg.Text != "" {
		out = append(out, anthropic.NewTextBlock(msg.Text))
	}
	for _, c := range msg.ToolCalls {
		out = append(out, anthropic.NewToolUseBlock(c.ID, toolInput(c.Args), llm.SentName(c.Name)))
	}
	return out
}

func toolResultBlock(r llm.ToolResult) anthropic.ContentBlockParamUnion {
	b := anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
	if r.Content != "" {
		b.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Content}}}
	}
	// A result's images are image blocks inside its tool_result, after
	// the text that describes them.
	for _, img := range r.Images {
		b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{
			OfImage: anthropic.NewImageBlockBase64(img.MIME, base64.StdEncoding.EncodeToString(img.Data)).OfImage})
	}
	for _, name := range r.References {
		// Loads the deferred tool's definition from the next step on.
		b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfToolReference: &anthropic.ToolReferenceBlockParam{ToolName: name}})
	}
	if r.IsError {
		b.IsError = anthropic.Bool(true)
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &b}
}

// toolInput is a call's arguments as the object tool_use.input must be;
// arguments that are not a JSON object (a model's malformed call, stored
// as given) are sent as an empty object rather than failing the request.
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return json.RawMessage(`{}`)
	}
	return trimmed
}

// ToolCache keeps tool declarations as Messages requests carry them
// (llm.DeclCache): each list of definitions is built and encoded once,
// then sent as those bytes by every model given the cache, and each
// definition is checked once. It is safe for concurrent use.
type ToolCache = llm.DeclCache[[]anthropic.ToolUnionParam]

// NewToolCache returns a cache of at most max definition lists; max <= 0
// means llm.DefaultToolCacheEntries.
func NewToolCache(max int) *ToolCache { return llm.NewDeclCache[[]anthropic.ToolUnionParam](max) }

// declared is the request's tools: from the model's ToolCache when it
// holds the definitions, encoded once (encodedTools); without a cache,
// toolParams.
func (m *Model) declared(defs []llm.ToolDef) ([]anthropic.ToolUnionParam, error) {
	if m.tools == nil || len(defs) == 0 {
		return toolParams(defs)
	}
	return m.tools.List(defs, encodedTools)
}

// encodedTools is toolParams with each declaration encoded by the SDK
// once and carried as those bytes (llm.EncodeOnce).
func encodedTools(defs []llm.ToolDef) ([]anthropic.ToolUnionParam, error) {
	out, err := toolParams(defs)
	if err != nil {
		return nil, err
	}
	err = llm.EncodeOnce(out, param.Override[anthropic.ToolUnionParam], func(i int, err error) error {
		return &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("anthropic: tool %q: the parameters cannot be encoded: %v", defs[i].Name, err)}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
