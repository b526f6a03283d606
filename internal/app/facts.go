package app

import (
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/turn"
)

// Caller is who a command acts for: names as people write them (the ids
// are their slugs; "" is the user "cli" of the organisation "default"),
// and an IANA timezone ("" for UTC).
type Caller struct {
	User, Department, Org, Timezone string
}

// TurnInput is what a command knows when a turn starts: the agent file
// (required), a "provider:model" overriding the agent's, the caller, and
// the conversation (see each command for what "" means).
type TurnInput struct {
	AgentFile      string
	Model          string
	Caller         Caller
	ConversationID string
}

// turnRequest loads the agent file and builds the engine request of a
// CLI turn, validating everything (agent, model, timezone, conversation)
// before anything is written.
func turnRequest(in TurnInput) (engine.Request, error) {
	if in.AgentFile == "" {
		return engine.Request{}, usagef("--agent is required")
	}
	a, err := config.LoadAgent(in.AgentFile)
	if err != nil {
		return engine.Request{}, &UsageError{Msg: err.Error()}
	}
	model, err := a.TurnModel(in.Model)
	if err != nil {
		return engine.Request{}, usagef("--model: %v", err)
	}
	if in.Caller.Timezone != "" {
		if _, err := turn.LoadZone(in.Caller.Timezone); err != nil {
			return engine.Request{}, usagef("--tz: %v", err)
		}
	}
	if err := notConsole(in.ConversationID); err != nil {
		return engine.Request{}, err
	}
	orgID, userID := ids.Slug(in.Caller.Org, "default"), ids.Slug(in.Caller.User, "cli")
	return engine.Request{
		Caller: turn.Caller{
			UserID: userID, DisplayName: in.Caller.User, Department: in.Caller.Department,
			Organisation: in.Caller.Org, Timezone: in.Caller.Timezone,
		},
		OrgID: orgID, ConversationID: in.ConversationID, Create: true,
		Agent: &engine.Agent{Agent: a.TurnAgent(), Model: model},
	}, nil
}
