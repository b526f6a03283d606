package store

import (
	"context"
	"time"
)

// RoleThought marks a thought-log entry: a note for the people who run the
// agent (why a tool was available), never sent to a model nor shown by
// read_transcript.
const RoleThought = "thought"

// RoleUser marks what the person wrote: the only messages conversation
// search (FindConversations' Text) reads.
const RoleUser = "user"

// Message is one transcript entry.
type Message struct {
	ConversationID string
	TurnID         string
	// Seq orders messages within a conversation; AppendMessage assigns it.
	Seq int64
	// Role is "user", "context", "assistant", "tool_call", "tool" or
	// RoleThought.
	// An assistant reply that calls tools is stored as an "assistant" message
	// (its text, possibly empty) followed by one "tool_call" message per
	// call, whose Content is the call's JSON arguments.
	Role string
	// Content is the text; for tool messages, the (possibly truncated) result.
	Content string
	// ToolName and ToolCallID are set on tool calls and tool results.
	ToolName   string
	ToolCallID string
	// Ref names the full result body in the result store when Content was
	// truncated (tool messages only).
	Ref string
	// IsError marks a tool result that reports a failure.
	IsError bool
	// Refused marks a tool result that answers a call the agent loop
	// refused to run (past a tool-call limit, or without a name): it
	// counts against no budget of calls run (tool messages only).
	Refused   bool
	CreatedAt time.Time
}

// Messages stores transcripts.
type Messages interface {
	// AppendMessage appends m to its conversation and returns its Seq.
	AppendMessage(ctx context.Context, orgID string, m Message) (int64, error)
	// AppendMessages appends ms in order, all or none, and returns their
	// Seqs. The messages may belong to different conversations.
	AppendMessages(ctx context.Context, orgID string, ms []Message) ([]int64, error)
	// ListMessages returns the conversation's messages with Seq < beforeSeq
	// (all when beforeSeq <= 0), oldest first.
	ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]Message, error)
	// LastMessageSeq returns the Seq of the conversation's last message,
	// 0 when it has none (or is not of that organisation). Seqs only grow,
	// so an unchanged value means no message was appended since: a cheap
	// check that facts read earlier are still current.
	LastMessageSeq(ctx context.Context, orgID, conversationID string) (int64, error)
}
