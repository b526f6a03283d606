package chat

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
)

//go:embed create_thread.md
var threadDescription string

// ThreadInput is create_thread's arguments.
type ThreadInput struct {
	Name      string `json:"name" jsonschema:"the thread's name: a few words on its topic"`
	Message   string `json:"message" jsonschema:"your first message in the thread"`
	MessageID string `json:"message_id,omitempty" jsonschema:"the id of the message to start it from, from message_metadata; omit to start it from the conversation"`
}

func threadTool(cfg Config) *tool.Tool {
	const name = "create_thread"
	want := surface.Capabilities(surface.Threads)
	return tool.New(tool.Spec{
		Name: name, Family: FamilyThread, Macros: []string{"create_thread_tool"},
		Description: threadDescription, Access: tool.Write, Requires: surface.Requires(want),
		Limits: []tool.Limit{{Name: "name_chars", Value: MaxThreadNameRunes}, {Name: "message_chars", Value: MaxTextRunes}},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["name"].MaxLength = ptr(MaxThreadNameRunes)
			s.Properties["message"].MaxLength = ptr(MaxTextRunes)
			s.Properties["message_id"].MaxLength = ptr(100)
		},
	}, func(ctx context.Context, sc tool.Scope, in ThreadInput) (changed, error) {
		title, err := checkText("the name", in.Name, MaxThreadNameRunes)
		if err != nil {
			return changed{}, err
		}
		first, err := checkText("the first message", in.Message, MaxTextRunes)
		if err != nil {
			return changed{}, err
		}
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return changed{}, err
		}
		th, err := sf.(surface.Threader).CreateThread(ctx, sc, in.MessageID, title, first)
		if err != nil {
			return changed{}, refusal(name, in.MessageID, err)
		}
		return changed{text: fmt.Sprintf("Started the thread %q (id %s) with your first message.", th.Place.Name, th.Place.ID),
			changes: []tool.MessageChange{{Action: "thread", Conversation: sc.ConversationID, Message: in.MessageID, Thread: th.Place.ID, Text: title}}}, nil
	})
}
