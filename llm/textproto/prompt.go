package textproto

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/llm"
)

// instructions tell the model the protocol; the definitions follow them.
//
//go:embed instructions.md
var instructions string

// innerRequest is req as the inner model gets it: tools in the system
// prompt, none native, history in text.
func innerRequest(req llm.Request) (llm.Request, error) {
	out := req
	out.Tools = nil
	if len(req.Tools) > 0 {
		block, err := toolPrompt(req.Tools)
		if err != nil {
			return llm.Request{}, &llm.Error{Kind: llm.ErrBadRequest, Msg: err.Error()}
		}
		out.System = joinBlocks(req.System, block)
	}
	out.Messages = rewriteHistory(req.Messages)
	return out, nil
}

// toolPrompt renders the instructions and the definitions, one compact
// JSON object per line in declaration order: the same tools give the same
// bytes, so a prompt cache still hits.
func toolPrompt(tools []llm.ToolDef) (string, error) {
	var b strings.Builder
	b.WriteString(instructions)
	b.WriteString("<tools>\n")
	for _, t := range tools {
		line, err := definition(t)
		if err != nil {
			return "", err
		}
		b.Write(line)
	}
	b.WriteString("</tools>")
	return b.String(), nil
}

// definition is one tool's line of the tools block, newline included.
func definition(t llm.ToolDef) ([]byte, error) {
	params := bytes.TrimSpace(t.Parameters)
	if len(params) == 0 {
		params = []byte(`{"type":"object","properties":{}}`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, params); err != nil {
		return nil, fmt.Errorf("textproto: tool %q: parameters: %w", t.Name, err)
	}
	def := struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, compact.Bytes()}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the prompt is read by a model, not a browser
	if err := enc.Encode(def); err != nil {
		return nil, fmt.Errorf("textproto: tool %q: %w", t.Name, err)
	}
	return b.Bytes(), nil
}

// joinBlocks joins non-empty prompt blocks with a blank line.
func joinBlocks(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return strings.TrimRight(a, "\n") + "\n\n" + b
}

// rewriteHistory turns tool calls and results into the protocol's text:
// an assistant message's calls are appended to its text, and a tool
// message becomes a user message of result blocks, carrying the results'
// images (in call order) as a user message's images. Other messages are
// kept as they are; msgs is not modified.
func rewriteHistory(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		switch {
		case m.Role == llm.Assistant && len(m.ToolCalls) > 0:
			m.Text = callsText(m.Text, m.ToolCalls)
			m.ToolCalls = nil
		case m.Role == llm.Tool:
			var images []llm.Image
			for _, r := range m.Results {
				images = append(images, r.Images...)
			}
			m = llm.Message{Role: llm.User, Text: resultsText(m.Results), Images: images}
		}
		out[i] = m
	}
	return out
}

// callsText is an assistant's text followed by its calls, one block a line.
func callsText(text string, calls []llm.ToolCall) string {
	parts := make([]string, 0, len(calls)+1)
	if text != "" {
		parts = append(parts, strings.TrimRight(text, "\n"))
	}
	for _, c := range calls {
		parts = append(parts, renderCall(c))
	}
	return strings.Join(parts, "\n")
}

// renderCall writes c in the protocol. Arguments that are not a JSON
// object are written as {}. Every "<" inside the JSON is escaped as \u003c
// (it can only occur inside strings), so no tag can appear in a block.
func renderCall(c llm.ToolCall) string {
	name, _ := json.Marshal(c.Name) // a string always marshals
	return "<tool_call>{\"name\": " + string(name) + ", \"arguments\": " + renderArgs(c.Args) + "}</tool_call>"
}

func renderArgs(args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil || !isObject(b.Bytes()) {
		return "{}"
	}
	return strings.ReplaceAll(b.String(), "<", `\u003c`)
}

// resultsText renders a tool message's results, one block each.
func resultsText(results []llm.ToolResult) string {
	blocks := make([]string, len(results))
	for i, r := range results {
		blocks[i] = renderResult(r)
	}
	return strings.Join(blocks, "\n")
}

// resultCloser keeps a result from closing its own block early: a fetched
// page that says "</tool_result>" must not end the block and speak as the
// user.
var resultCloser = strings.NewReplacer("</tool_result", `<\/tool_result`)

var attrEscaper = strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;", "\n", " ")

func renderResult(r llm.ToolResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<tool_result name="%s" id="%s"`, attrEscaper.Replace(r.Name), attrEscaper.Replace(r.CallID))
	if r.IsError {
		b.WriteString(` error="true"`)
	}
	b.WriteString(">\n")
	b.WriteString(strings.TrimRight(resultCloser.Replace(r.Content), "\n"))
	b.WriteString("\n</tool_result>")
	return b.String()
}
