package httpapi

import (
	"context"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
)

// Caller is who a request acts for, taken from its credential and the
// user's stored record; never from the request body.
type Caller struct {
	OrgID       string
	UserID      string
	DisplayName string
	Department  string
	// Timezone is the IANA zone the browser sent with this request, else
	// the user's stored one; "" means UTC.
	Timezone string
	// Role is store.RoleAdmin or store.RoleMember.
	Role string
}

// Inspection is a turn's assembled request as the inspector shows it.
type Inspection struct {
	TurnID   string               `json:"turn_id,omitempty"`
	Agent    string               `json:"agent"`
	Model    string               `json:"model"`
	System   string               `json:"system"`
	Context  string               `json:"context"`
	Tools    []prompt.Definition  `json:"tools"`
	Sizes    prompt.Sizes         `json:"sizes"`
	Excluded []registry.Exclusion `json:"excluded"`
	// Intent lists Deliberate Tool Mode's matches; empty when the mode is
	// off or matched nothing.
	Intent   []IntentMatch `json:"intent"`
	Warnings []string      `json:"warnings"`
}

// IntentMatch is one reason Deliberate Tool Mode opened a family.
type IntentMatch struct {
	Family  string `json:"family"`
	Trigger string `json:"trigger"`
	Source  string `json:"source"`
}

// ToolView is one catalog tool with its size.
type ToolView struct {
	Name        string `json:"name"`
	Family      string `json:"family"`
	Description string `json:"description"`
	Access      string `json:"access"`
	AlwaysOn    bool   `json:"always_on"`
	Chars       int    `json:"definition_chars"`
}

// Catalog is the tool catalog with its definition ceilings.
type Catalog struct {
	Tools             []ToolView `json:"tools"`
	AlwaysPaidChars   int        `json:"always_paid_chars"`
	AlwaysPaidCeiling int        `json:"always_paid_ceiling"`
	WidestChars       int        `json:"widest_chars"`
	WidestCeiling     int        `json:"widest_ceiling"`
}

// Engine runs turns for the API. internal/app implements it over the same
// spine the CLI uses; tests use a fake. Errors that are the caller's fault
// (an unknown agent, a message too long) are *BadRequest; anything else is
// an internal error whose detail is logged, never sent.
type Engine interface {
	// Send runs message in the conversation as c: a new turn, or the
	// answer to the conversation's paused turn. Events go to emit as they
	// happen, ending with agent.EventDone or agent.EventError; emit is
	// never called after Send returns. Cancelling ctx cancels the turn,
	// which is then recorded as interrupted.
	Send(ctx context.Context, c Caller, conversationID, message string, emit func(agent.Event)) error
	// Inspect returns the request message would send in the conversation
	// now (or, with turnID set, the request of that stored turn's
	// toolset); nothing runs and nothing is written.
	Inspect(ctx context.Context, c Caller, conversationID, turnID, message string) (Inspection, error)
	// ValidateAgent parses an agent definition (the YAML an admin
	// authored) and renders its prompt once: the agent's name, and the
	// template's warnings.
	ValidateAgent(definition []byte) (name string, warnings []string, err error)
	// Catalog lists every tool with its size, and the ceilings.
	Catalog() Catalog
}

// BadRequest is an Engine error caused by the request; its message is
// shown to the caller.
type BadRequest struct{ Msg string }

func (e *BadRequest) Error() string { return e.Msg }
