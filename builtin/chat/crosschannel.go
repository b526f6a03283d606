package chat

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
)

//go:embed cross_channel_message.md
var crossChannelDescription string

// CrossChannelInput is cross_channel_message's arguments.
type CrossChannelInput struct {
	Action     string `json:"action" jsonschema:"list (the places you may post in) or post"`
	Place      string `json:"place,omitempty" jsonschema:"for post: the id of the conversation to post in, from list"`
	Text       string `json:"text,omitempty" jsonschema:"for post: the message"`
	ReportBack bool   `json:"report_back,omitempty" jsonschema:"for post: also tell the person here what you posted"`
}

func crossChannelTool(cfg Config) *tool.Tool {
	const name = "cross_channel_message"
	want := surface.Capabilities(surface.CrossPost)
	return tool.New(tool.Spec{
		Name: name, Family: FamilyCrossChannel, Macros: []string{"cross_channel_tool"},
		Description: crossChannelDescription, Access: tool.Write, Requires: surface.Requires(want),
		Limits: []tool.Limit{{Name: "text_chars", Value: MaxTextRunes}, {Name: "places", Value: MaxPlaces}},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{"list", "post"}
			s.Properties["place"].MaxLength = ptr(200)
			s.Properties["text"].MaxLength = ptr(MaxTextRunes)
		},
	}, func(ctx context.Context, sc tool.Scope, in CrossChannelInput) (changed, error) {
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return changed{}, err
		}
		p := sf.(surface.Poster)
		if in.Action == "list" {
			places, err := p.Places(ctx, sc, MaxPlaces)
			if err != nil {
				return changed{}, refusal(name, "", err)
			}
			return changed{text: placeList(places)}, nil
		}
		if in.Place == "" {
			return changed{}, errors.New("give the place to post in: list them with action \"list\"")
		}
		text, err := checkText("the message", in.Text, MaxTextRunes)
		if err != nil {
			return changed{}, err
		}
		m, err := p.Post(ctx, sc, in.Place, text)
		if err != nil {
			return changed{}, refusal(name, "", err)
		}
		out := fmt.Sprintf("Posted in %s (message %s).", in.Place, m.ID)
		if in.ReportBack {
			out += " Tell the person here, in a sentence, what you posted and where."
		} else {
			out += " Say nothing more about it here unless asked."
		}
		return changed{text: out, changes: []tool.MessageChange{{Action: "post", Conversation: in.Place, Message: m.ID, Text: text}}}, nil
	})
}

// placeList writes places for the model, one a line.
func placeList(ps []surface.Place) string {
	if len(ps) == 0 {
		return "There is no other conversation to post in."
	}
	var b strings.Builder
	b.WriteString("Places you may post in, most recent first:\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "- %s: %s", p.ID, p.Name)
		if p.Parent != "" {
			fmt.Fprintf(&b, " (a thread of %s)", p.Parent)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
