package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/quiverhq/quiver/store"
)

// Transcript is a stored conversation as "quiver transcript --json"
// prints it.
type Transcript struct {
	ConversationID string              `json:"conversation_id"`
	Messages       []TranscriptMessage `json:"messages"`
}

// TranscriptMessage is one message of a Transcript.
type TranscriptMessage struct {
	Seq        int64     `json:"seq"`
	TurnID     string    `json:"turn_id"`
	Role       string    `json:"role"`
	Content    string    `json:"content"`
	ToolName   string    `json:"tool_name,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	Ref        string    `json:"ref,omitempty"`
	IsError    bool      `json:"is_error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// NewTranscript is the transcript of conversation id holding msgs (as
// Repositories.Transcript reads them); Messages is never nil.
func NewTranscript(id string, msgs []store.Message) Transcript {
	out := Transcript{ConversationID: id, Messages: make([]TranscriptMessage, len(msgs))}
	for i, m := range msgs {
		out.Messages[i] = TranscriptMessage{Seq: m.Seq, TurnID: m.TurnID, Role: m.Role, Content: m.Content, ToolName: m.ToolName,
			ToolCallID: m.ToolCallID, Ref: m.Ref, IsError: m.IsError, CreatedAt: m.CreatedAt}
	}
	return out
}

// WriteText writes the transcript for people: each message with its seq,
// time and author (→ a tool call, ← its result, ✗ an error result), and
// where a long result is stored whole.
func (t Transcript) WriteText(w io.Writer) {
	for _, m := range t.Messages {
		who := m.Role
		switch m.Role {
		case "tool_call":
			who = "→ " + m.ToolName
		case "tool":
			who = "← " + m.ToolName
			if m.IsError {
				who = "✗ " + m.ToolName
			}
		}
		fmt.Fprintf(w, "#%d %s %s\n%s\n", m.Seq, m.CreatedAt.Format(time.DateTime), who, m.Content)
		if m.Ref != "" {
			fmt.Fprintf(w, "(full result: %s)\n", m.Ref)
		}
		fmt.Fprintln(w)
	}
}
