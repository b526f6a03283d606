package chat

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
)

//go:embed manage_message.md
var manageDescription string

// ManageInput is manage_message's arguments.
type ManageInput struct {
	MessageID string `json:"message_id" jsonschema:"the message's id, from message_metadata"`
	Action    string `json:"action" jsonschema:"pin, unpin, edit or delete"`
	Text      string `json:"text,omitempty" jsonschema:"the message's new text, for edit"`
}

// manageCap is the capability an action needs.
func manageCap(action string) surface.Capability {
	switch action {
	case "edit":
		return surface.Edit
	case "delete":
		return surface.Delete
	}
	return surface.Pin
}

func manageTool(cfg Config) *tool.Tool {
	const name = "manage_message"
	return tool.New(tool.Spec{
		Name: name, Family: FamilyManage, Macros: []string{"manage_message_tool", "pin_tool"},
		Description: manageDescription, Access: tool.Write,
		Requires: surface.RequiresAny(surface.Capabilities(surface.Pin | surface.Edit | surface.Delete)),
		Limits:   []tool.Limit{{Name: "text_chars", Value: MaxTextRunes}},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{"pin", "unpin", "edit", "delete"}
			s.Properties["message_id"].MaxLength = ptr(100)
			s.Properties["text"].MaxLength = ptr(MaxTextRunes)
		},
	}, func(ctx context.Context, sc tool.Scope, in ManageInput) (changed, error) {
		text := ""
		if in.Action == "edit" {
			var err error
			if text, err = checkText("the new text", in.Text, MaxTextRunes); err != nil {
				return changed{}, err
			}
		}
		sf, err := resolve(cfg, sc, name, surface.Capabilities(manageCap(in.Action)))
		if err != nil {
			return changed{}, err
		}
		switch in.Action {
		case "pin":
			err = sf.(surface.Pinner).Pin(ctx, sc, in.MessageID)
		case "unpin":
			err = sf.(surface.Pinner).Unpin(ctx, sc, in.MessageID)
		case "edit":
			err = sf.(surface.Editor).Edit(ctx, sc, in.MessageID, text)
		case "delete":
			err = sf.(surface.Editor).Delete(ctx, sc, in.MessageID)
		}
		if err != nil {
			return changed{}, refusal(name, in.MessageID, err)
		}
		return changed{text: fmt.Sprintf("Done: %s message %s.", in.Action, in.MessageID),
			changes: []tool.MessageChange{{Action: in.Action, Conversation: sc.ConversationID, Message: in.MessageID, Text: text}}}, nil
	})
}
