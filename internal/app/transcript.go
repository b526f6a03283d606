package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/store"
)

var transcriptUsage = usageText("transcript")

// TranscriptMessage is one message of "quiver transcript --json".
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

func runTranscript(ctx context.Context, args []string, env Env) error {
	fs := newFlags("transcript")
	var user, org, data string
	var asJSON bool
	fs.StringVar(&user, "user", "", "")
	fs.StringVar(&org, "org", "", "")
	fs.StringVar(&data, "data", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parse(fs, args, transcriptUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("transcript: give exactly one CONVERSATION_ID")
	}
	o, err := dataFlags{data: data}.open(ctx, needMessages, env)
	if err != nil {
		return err
	}
	defer o.close()
	repos := engine.Repositories{Conversations: o.st, Messages: o.st}
	stored, err := repos.Transcript(ctx, ids.Slug(org, "default"), ids.Slug(user, "cli"), pos[0])
	if errors.Is(err, engine.ErrNoConversation) {
		return usagef("transcript: no conversation %q for this user", pos[0])
	}
	if err != nil {
		return err
	}
	msgs := transcriptMessages(stored)
	if asJSON {
		return writeJSON(env.Stdout, struct {
			ConversationID string              `json:"conversation_id"`
			Messages       []TranscriptMessage `json:"messages"`
		}{pos[0], msgs})
	}
	printTranscript(env.Stdout, msgs)
	return nil
}

// transcriptMessages is the --json form of stored messages.
func transcriptMessages(msgs []store.Message) []TranscriptMessage {
	out := make([]TranscriptMessage, len(msgs))
	for i, m := range msgs {
		out[i] = TranscriptMessage{Seq: m.Seq, TurnID: m.TurnID, Role: m.Role, Content: m.Content, ToolName: m.ToolName,
			ToolCallID: m.ToolCallID, Ref: m.Ref, IsError: m.IsError, CreatedAt: m.CreatedAt}
	}
	return out
}

func printTranscript(w io.Writer, msgs []TranscriptMessage) {
	for _, m := range msgs {
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
