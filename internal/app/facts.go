package app

import (
	"strings"
	"time"
	"unicode"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/turn"
)

// Caller is who the CLI acts for.
type Caller struct {
	User, Department, Org, Timezone string
}

// TurnInput is what a CLI command knows when a turn starts.
type TurnInput struct {
	AgentFile      string
	Model          string
	Caller         Caller
	ConversationID string
	Now            time.Time
}

// collectFacts loads the agent file and builds the turn's facts, validating
// everything (agent, model, timezone) before anything is written.
func collectFacts(in TurnInput) (turn.Facts, error) {
	if in.AgentFile == "" {
		return turn.Facts{}, usagef("--agent is required")
	}
	a, err := config.LoadAgent(in.AgentFile)
	if err != nil {
		return turn.Facts{}, &UsageError{Msg: err.Error()}
	}
	model, err := a.TurnModel(in.Model)
	if err != nil {
		return turn.Facts{}, usagef("--model: %v", err)
	}
	if in.Caller.Timezone != "" {
		if _, err := turn.LoadZone(in.Caller.Timezone); err != nil {
			return turn.Facts{}, usagef("--tz: %v", err)
		}
	}
	orgID, userID := slug(in.Caller.Org, "default"), slug(in.Caller.User, "cli")
	return turn.Facts{
		TurnID: "cli",
		Start:  in.Now,
		Caller: turn.Caller{
			UserID: userID, DisplayName: in.Caller.User, Department: in.Caller.Department,
			Organisation: in.Caller.Org, Timezone: in.Caller.Timezone,
		},
		Place: turn.Place{OrgID: orgID, ConversationID: in.ConversationID},
		Agent: a.TurnAgent(),
		Model: model,
		Payer: orgID,
	}, nil
}

// slug turns a display name into a stable id usable as one path segment:
// lower-case letters and digits (any script) joined by '-'. Empty input gives def.
func slug(s, def string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return def
	}
	if r := []rune(out); len(r) > 64 {
		out = string(r[:64])
	}
	return out
}
