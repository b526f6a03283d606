// Package discovery provides enable_tools, Deliberate Tool Mode's
// recovery tool: declared under the mode on every turn, it lets the model
// open a family the gate left closed when the person asked for something
// the packs and the classifier did not recognise. The loop declares the
// family's tools from the next model step on (tool.Effect.Declare, only
// what the turn's selection allowed), and the family stays open for the
// rest of the conversation, as if the message had opened it.
//
// Index is the ranking search_tools will answer with (issue 20's tool
// discovery): a full-text index of the tools a turn may use.
package discovery

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// Name is the tool's name.
const Name = intent.RecoveryTool

// MaxReasonChars bounds the reason a call gives.
const MaxReasonChars = 200

// Recorder keeps a conversation's open families (store.Intents).
type Recorder interface {
	OpenIntentTargets(ctx context.Context, orgID, conversationID string, targets []string) ([]string, error)
}

// families are the families enable_tools opens, each with the line the
// description gives it, in the mode's documentation order. The line
// names what the tools do, so the model can match a request to it.
var families = []struct{ name, line string }{
	{intent.Search, "the web"},
	{intent.Reminder, "reminders"},
	{intent.Memory, "memory"},
	{intent.Image, "make images"},
	{intent.Video, "make videos"},
	{intent.Voice, "voice"},
	{intent.MediaAnalysis, "see media"},
	{intent.MessageAction, "act on messages"},
	{intent.CrossChannel, "other channels"},
	{intent.Thread, "threads"},
	{intent.UserBlocking, "block users"},
	{intent.UserInfo, "user profile"},
	{intent.Capabilities, "what you can do"},
	{intent.Calculator, "arithmetic"},
	{intent.Files, "workspace files"},
	{intent.Knowledge, "agent's docs"},
	{intent.Attachments, "files sent here"},
	{intent.Budget, "spending"},
	{intent.History, "past chats"},
	{intent.Code, "run code"},
	{intent.Artifacts, "documents to keep"},
	{intent.Skills, "skills"},
	// Discovery is left out: its tools are never in a selection, so
	// enable_tools could declare none of them (the engine adds them when
	// a message opens the family, or when it defers a large toolset).
}

// Input is the tool's arguments.
type Input struct {
	Family string `json:"family"`
	Reason string `json:"reason"`
}

// description is the tool's description: when to call it, then the
// families one per line. It is the same on every turn, so the declared
// prefix never changes; a family already open is answered as such.
func description() string {
	var b strings.Builder
	b.WriteString("Opens a tool family the user needs; its tools come next step. Not for chat:")
	for _, f := range families {
		fmt.Fprintf(&b, "\n%s: %s", f.name, f.line)
	}
	return b.String()
}

// Tool returns enable_tools, recording what it opens with rec (nil
// records nothing: the family is then open for this turn only). It is
// always on, and its requirement holds only when the mode gates the turn
// (turn.Selection.Deliberate), so it is never declared otherwise.
func Tool(rec Recorder) *tool.Tool {
	return tool.New(tool.Spec{
		Name:        Name,
		Family:      "discovery",
		Description: description(),
		AlwaysOn:    true,
		Requires: func(s turn.Selection) string {
			if !s.Deliberate {
				return "declared only under deliberate tool mode"
			}
			return ""
		},
		Tune: func(s *jsonschema.Schema) {
			// The families are listed in the description; an enum here
			// would list them twice (checked by the handler instead).
			n := MaxReasonChars
			s.Properties["reason"].MaxLength = &n
		},
	}, func(_ context.Context, sc tool.Scope, in Input) (Output, error) { return enable(rec, sc, in) })
}

// Output is what a call answers; its effect declares the family's tools
// and, once the loop has declared some, records the family open.
type Output struct {
	family string
	tools  []string
	keep   func(ctx context.Context, added []string) error
}

// ModelText is what the model reads back; the loop adds which tools it
// declared, or why none.
func (o Output) ModelText() string { return "Asked for " + o.family + "." }

// ToolEffect asks the loop to declare the family's tools.
func (o Output) ToolEffect() tool.Effect { return tool.Effect{Declare: o.tools, Declared: o.keep} }

func enable(rec Recorder, sc tool.Scope, in Input) (Output, error) {
	if !slices.ContainsFunc(families, func(f struct{ name, line string }) bool { return f.name == in.Family }) {
		return Output{}, fmt.Errorf("%q is not one of the families listed", in.Family)
	}
	out := Output{family: in.Family, tools: intent.TargetTools(in.Family)}
	if rec != nil && sc.ConversationID != "" {
		// Recorded only when the loop declared some of the family's tools:
		// a family the selection left out stays closed, not recorded open.
		out.keep = func(ctx context.Context, _ []string) error {
			if _, err := rec.OpenIntentTargets(ctx, sc.OrgID, sc.ConversationID, []string{in.Family}); err != nil {
				return fmt.Errorf("record the open family: %w", err)
			}
			return nil
		}
	}
	return out, nil
}
