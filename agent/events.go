package agent

import (
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/tool"
)

// EventKind names what an Event carries.
type EventKind string

// Events a turn emits, in the order they happen.
const (
	EventText        EventKind = "text"         // a delta of the answer
	EventToolCall    EventKind = "tool_call"    // the model called a tool
	EventToolResult  EventKind = "tool_result"  // a call's result
	EventPause       EventKind = "pause"        // a clarifying question; the turn waits
	EventNextActions EventKind = "next_actions" // follow-up suggestions
	EventChecklist   EventKind = "checklist"    // the agent's checklist for the turn, as it now stands
	EventUsage       EventKind = "usage"        // one model call's usage and cost
	EventDone        EventKind = "done"         // the turn stopped (Stop says how)
	EventError       EventKind = "error"        // a failure, in words for the user
	EventDeclared    EventKind = "declared"     // tools declared mid-turn (Actions: their names)
	EventMessages    EventKind = "messages"     // a message tool changed messages (Messages: what changed)
)

// Event is one thing a turn reports to its surface as it happens.
type Event struct {
	Kind           EventKind       `json:"type"`
	ConversationID string          `json:"conversation_id"`
	TurnID         string          `json:"turn_id"`
	Text           string          `json:"text,omitempty"`
	Call           *llm.ToolCall   `json:"call,omitempty"`
	Result         *Result         `json:"result,omitempty"`
	Pause          *tool.Pause     `json:"pause,omitempty"`
	Actions        []string        `json:"actions,omitempty"`
	Checklist      *tool.Checklist `json:"checklist,omitempty"`
	// Messages are the changes of an EventMessages: reactions, pins,
	// edits, deletions, threads and posts a message tool made.
	Messages   []tool.MessageChange `json:"messages,omitempty"`
	Usage      *llm.Usage           `json:"usage,omitempty"`
	CostMicros int64                `json:"cost_micros,omitempty"`
	Stop       string               `json:"stop,omitempty"`
	Error      string               `json:"error,omitempty"`
}

// Result is a tool result as a surface sees it.
type Result struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	Ref     string `json:"ref,omitempty"`
}
