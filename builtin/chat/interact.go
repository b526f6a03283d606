package chat

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
)

//go:embed interact_with_message.md
var interactDescription string

// InteractInput is interact_with_message's arguments.
type InteractInput struct {
	MessageID string `json:"message_id" jsonschema:"the message's id, from message_metadata"`
	Action    string `json:"action" jsonschema:"react, unreact (take your reaction back) or reply"`
	Emoji     string `json:"emoji,omitempty" jsonschema:"the emoji, for react and unreact"`
	Text      string `json:"text,omitempty" jsonschema:"the reply, for reply: short"`
}

func interactTool(cfg Config) *tool.Tool {
	const name = "interact_with_message"
	return tool.New(tool.Spec{
		Name: name, Family: FamilyInteract, Macros: []string{"message_interaction_tool"},
		Description: interactDescription, Access: tool.Write,
		Requires: surface.RequiresAny(surface.Capabilities(surface.React | surface.Reply)),
		Limits:   []tool.Limit{{Name: "reply_chars", Value: MaxReplyRunes}, {Name: "emoji_bytes", Value: store.MaxEmojiBytes}},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{"react", "unreact", "reply"}
			s.Properties["message_id"].MaxLength = ptr(100)
			s.Properties["emoji"].MaxLength = ptr(store.MaxEmojiBytes)
			s.Properties["text"].MaxLength = ptr(MaxReplyRunes)
		},
	}, func(ctx context.Context, sc tool.Scope, in InteractInput) (changed, error) {
		if in.Action == "reply" {
			return reply(ctx, cfg, sc, in)
		}
		if in.Emoji == "" {
			return changed{}, errors.New("give the emoji to " + in.Action + " with")
		}
		sf, err := resolve(cfg, sc, name, surface.Capabilities(surface.React))
		if err != nil {
			return changed{}, err
		}
		r := sf.(surface.Reactor)
		if in.Action == "unreact" {
			err = r.Unreact(ctx, sc, in.MessageID, in.Emoji)
		} else {
			err = r.React(ctx, sc, in.MessageID, in.Emoji)
		}
		if err != nil {
			return changed{}, refusal(name, in.MessageID, err)
		}
		verb := "Reacted to"
		if in.Action == "unreact" {
			verb = "Took back your reaction on"
		}
		return changed{text: fmt.Sprintf("%s message %s with %s.", verb, in.MessageID, in.Emoji),
			changes: []tool.MessageChange{{Action: in.Action, Conversation: sc.ConversationID, Message: in.MessageID, Emoji: in.Emoji}}}, nil
	})
}

func reply(ctx context.Context, cfg Config, sc tool.Scope, in InteractInput) (changed, error) {
	const name = "interact_with_message"
	text, err := checkText("the reply", in.Text, MaxReplyRunes)
	if err != nil {
		return changed{}, err
	}
	sf, err := resolve(cfg, sc, name, surface.Capabilities(surface.Reply))
	if err != nil {
		return changed{}, err
	}
	m, err := sf.(surface.Replier).Reply(ctx, sc, in.MessageID, text)
	if err != nil {
		return changed{}, refusal(name, in.MessageID, err)
	}
	return changed{text: fmt.Sprintf("Replied to message %s (your reply is message %s).", in.MessageID, m.ID),
		changes: []tool.MessageChange{{Action: "post", Conversation: sc.ConversationID, Message: m.ID, Text: text}}}, nil
}
