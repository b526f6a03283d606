package agent

import (
	"encoding/json"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/store"
)

// Stored message roles beyond the llm ones.
const (
	roleContext  = "context"
	roleToolCall = "tool_call"
)

// toLLM rebuilds the model's view of a conversation from its stored
// messages. Context messages of other turns are dropped (the current turn's
// context message says who and when); tool calls join the assistant message
// before them; consecutive tool results join one tool message; a call left
// without a result (a crash between steps) is answered "interrupted", so no
// call is sent dangling.
func toLLM(msgs []store.Message, turnID string) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		out = addMessage(out, m, turnID)
	}
	return answerDangling(out)
}

// addMessage adds one stored message to the model's view.
func addMessage(out []llm.Message, m store.Message, turnID string) []llm.Message {
	switch m.Role {
	case roleContext:
		if m.TurnID == turnID {
			out = append(out, llm.Message{Role: llm.User, Text: m.Content})
		}
	case string(llm.User):
		out = append(out, llm.Message{Role: llm.User, Text: m.Content})
	case string(llm.Assistant):
		out = append(out, llm.Message{Role: llm.Assistant, Text: m.Content})
	case roleToolCall:
		out = appendCall(out, llm.ToolCall{ID: m.ToolCallID, Name: m.ToolName, Args: args(m.Content)})
	case string(llm.Tool):
		out = appendResult(out, llm.ToolResult{CallID: m.ToolCallID, Name: m.ToolName, Content: m.Content, IsError: m.IsError})
	}
	return out
}

func args(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return json.RawMessage("{}")
}

func appendCall(out []llm.Message, c llm.ToolCall) []llm.Message {
	if n := len(out); n > 0 && out[n-1].Role == llm.Assistant {
		out[n-1].ToolCalls = append(out[n-1].ToolCalls, c)
		return out
	}
	return append(out, llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{c}})
}

func appendResult(out []llm.Message, r llm.ToolResult) []llm.Message {
	if n := len(out); n > 0 && out[n-1].Role == llm.Tool {
		out[n-1].Results = append(out[n-1].Results, r)
		return out
	}
	return append(out, llm.Message{Role: llm.Tool, Results: []llm.ToolResult{r}})
}

// answerDangling makes every assistant tool call answered by the tool
// message right after it, in call order, and drops results that answer no
// call.
func answerDangling(in []llm.Message) []llm.Message {
	var out []llm.Message
	for i := 0; i < len(in); i++ {
		m := in[i]
		if m.Role == llm.Tool {
			continue // orphan results: their calls were answered below or never made
		}
		out = append(out, m)
		if m.Role != llm.Assistant || len(m.ToolCalls) == 0 {
			continue
		}
		var got map[string]llm.ToolResult
		if i+1 < len(in) && in[i+1].Role == llm.Tool {
			got = byCall(in[i+1].Results)
			i++
		}
		out = append(out, llm.Message{Role: llm.Tool, Results: matchResults(m.ToolCalls, got)})
	}
	return out
}

func byCall(rs []llm.ToolResult) map[string]llm.ToolResult {
	m := make(map[string]llm.ToolResult, len(rs))
	for _, r := range rs {
		m[r.CallID] = r
	}
	return m
}

func matchResults(calls []llm.ToolCall, got map[string]llm.ToolResult) []llm.ToolResult {
	rs := make([]llm.ToolResult, len(calls))
	for i, c := range calls {
		r, ok := got[c.ID]
		if !ok {
			r = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "interrupted: this call was never answered", IsError: true}
		}
		rs[i] = r
	}
	return rs
}

// trimHistory keeps at most max messages, cutting only before a user
// message so no tool call loses its result.
func trimHistory(msgs []store.Message, max int) []store.Message {
	if len(msgs) <= max {
		return msgs
	}
	cut := len(msgs) - max
	for cut < len(msgs) && msgs[cut].Role != string(llm.User) {
		cut++
	}
	return msgs[cut:]
}
