// Package transcript provides read_transcript, the always-on tool that reads
// earlier turns of the current conversation.
package transcript

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Limits of one call.
const (
	DefaultMaxChars = 6000
	MaxMaxChars     = 20000
)

//go:embed read_transcript.md
var description string

// Input is the tool's arguments.
type Input struct {
	MaxChars int   `json:"maxChars,omitempty" jsonschema:"at most this many characters (default 6000, max 20000)"`
	Before   int64 `json:"before,omitempty" jsonschema:"read messages before this message number, to page back"`
}

// Tool returns read_transcript over ms. It reads only the calling turn's
// conversation, and only turns before the calling one; when ms is also a
// store.Branches, only those of the branch shown (the calling turn's,
// which is its conversation's head while it runs), as the model's history. A nil ms gives the
// same tool and declaration, whose calls with valid arguments fail with an
// infrastructure error wrapping store.ErrNoStore: for commands that
// declare tools but open no store.
func Tool(ms store.Messages) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        "read_transcript",
		Family:      "transcript",
		Macros:      []string{"transcript_tool"},
		Description: description,
		AlwaysOn:    true,
		// Its output is bounded by maxChars; storing it again would answer
		// a read with a new reference instead of the text.
		Unstored: true,
		Limits:   []tool.Limit{{Name: "maxChars_default", Value: DefaultMaxChars}, {Name: "maxChars_max", Value: MaxMaxChars}},
	}, func(ctx context.Context, s tool.Scope, in Input) (string, error) {
		return read(ctx, ms, s, in)
	})
}

func read(ctx context.Context, ms store.Messages, s tool.Scope, in Input) (string, error) {
	if in.MaxChars == 0 {
		in.MaxChars = DefaultMaxChars
	}
	if in.MaxChars < 1 || in.MaxChars > MaxMaxChars {
		return "", fmt.Errorf("maxChars must be between 1 and %d, got %d", MaxMaxChars, in.MaxChars)
	}
	if ms == nil {
		return "", tool.Infra(fmt.Errorf("read_transcript: %w", store.ErrNoStore))
	}
	msgs, err := ms.ListMessages(ctx, s.OrgID, s.ConversationID, in.Before)
	if err != nil {
		return "", tool.Infra(fmt.Errorf("read_transcript: %w", err))
	}
	if b, ok := ms.(store.Branches); ok {
		tree, err := b.TurnTree(ctx, s.OrgID, s.ConversationID)
		if err != nil {
			return "", tool.Infra(fmt.Errorf("read_transcript: %w", err))
		}
		msgs = tree.OnPath(msgs)
	}
	var earlier []store.Message
	for _, m := range msgs {
		if m.TurnID != s.TurnID && m.Role != "context" && m.Role != store.RoleThought {
			earlier = append(earlier, m)
		}
	}
	if len(earlier) == 0 {
		return "No earlier messages in this conversation.", nil
	}
	return render(earlier, in.MaxChars), nil
}

// render keeps the newest messages that fit in max characters, oldest first,
// and says how to page back when older ones were left out. A single message
// longer than the budget keeps its start and says that the rest is cut, so
// the model does not take a part for the whole.
func render(msgs []store.Message, max int) string {
	var lines []string
	used := 0
	first := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		line := fmt.Sprintf("#%d %s: %s", msgs[i].Seq, label(msgs[i]), msgs[i].Content)
		n := utf8.RuneCountInString(line)
		if used+n > max {
			if len(lines) == 0 {
				lines = append(lines, string([]rune(line)[:max])+fmt.Sprintf("\n[Cut: this message has %d characters; only the first %d are shown.]", n, max))
				first = i
			}
			break
		}
		lines = append(lines, line)
		used += n + 1
		first = i
	}
	for l, r := 0, len(lines)-1; l < r; l, r = l+1, r-1 {
		lines[l], lines[r] = lines[r], lines[l]
	}
	out := strings.Join(lines, "\n")
	if first > 0 {
		out = fmt.Sprintf("[Older messages left out: call again with before=%d.]\n%s", msgs[first].Seq, out)
	}
	return out
}

func label(m store.Message) string {
	if m.Role == "tool" && m.ToolName != "" {
		return "tool " + m.ToolName
	}
	return m.Role
}
