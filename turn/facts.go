// Package turn holds the facts of one turn: who is asking, where, with which
// agent and model, and what the deployment has configured. Facts are collected
// once when a turn starts; every later step (select, gate, assemble, dispatch)
// reads them and none re-derives them.
package turn

import (
	"fmt"
	"slices"
	"time"

	"github.com/quiverhq/quiver/tmpl"
)

// Facts is everything known about a turn at its start. The zero value is a
// turn by an anonymous caller, in UTC, with an agent that allows no optional
// tools and a model without tool support.
type Facts struct {
	// TurnID identifies the turn; it is data, never prompt text.
	TurnID string
	// Start is the instant the turn began; the context message shows it in
	// the caller's zone.
	Start time.Time
	// Caller is the person the model talks with.
	Caller Caller
	// Place is where the conversation happens.
	Place Place
	// Agent is the configured agent answering.
	Agent Agent
	// Model is the model that runs the turn.
	Model Model
	// Attachments is the number of files attached to the conversation.
	Attachments int
	// Knowledge reports whether the agent has knowledge attached.
	Knowledge bool
	// Skills are the skills attached to the agent, by name, read once
	// when the turn starts: what load_skill may load and the system
	// prompt lists. Nil when it has none.
	Skills []Skill
	// ShortTermMemory is the working memory update_short_term_memory
	// kept for the turn's channel or conversation (Scope.Thread), read
	// once when the turn starts; "" when there is none. The context
	// message shows it, never the system prompt.
	ShortTermMemory string
	// Backends names the configured keys and backends ("embedding",
	// "brave_key", "speech", ...) that tools may require.
	Backends []string
	// Payer identifies who is billed for the turn. It is carried for
	// accounting only and appears in no prompt text.
	Payer string
	// Network is the organisation's network mode for the turn's egress
	// (netguard's mode names: what MCP servers and user-given URLs may
	// reach); empty means the deployment's default.
	Network string
	// Deliberate reports that Deliberate Tool Mode gates the turn, which
	// declares its recovery tool (enable_tools).
	Deliberate bool
	// Budget is the monthly budgets the turn is held to, read once when
	// it starts; the zero value holds it to none.
	Budget Budget
	// Scheduled describes the scheduled task the turn runs; nil for a
	// turn a person started.
	Scheduled *Scheduled
}

// Scheduled is the scheduled task a turn runs, as the scheduler claimed
// it.
type Scheduled struct {
	// TaskID and Title name the task (the title is data, never a
	// template).
	TaskID, Title string
	// Due is when the run was due; Late how much later it started (zero
	// when on time): the context message says so.
	Due  time.Time
	Late time.Duration
	// Tools are the tools the turn that scheduled the task could use:
	// the run declares only those its own selection still allows.
	Tools []string
	// Key is the run's idempotency key, the same on every retry of the
	// due run (what a surface that takes one sends with its messages).
	Key string
}

// Skill is a skill attached to the turn's agent as the turn sees it: its
// name and what it is for. The text comes from an imported SKILL.md, so
// it is data, never a template.
type Skill struct {
	Name        string
	Description string
}

// Budget is what a turn may spend in the current calendar month (UTC):
// the caller's own budget (or their organisation's default for each
// person) and the organisation's. A zero limit is none in that unit.
type Budget struct {
	User, Org Limit
}

// Limit is a budget in money (CostMicros, millionths of the prices'
// currency unit) and in tokens (input and output of every call).
type Limit struct {
	CostMicros int64
	Tokens     int64
}

// Unlimited reports whether l limits nothing.
func (l Limit) Unlimited() bool { return l.CostMicros == 0 && l.Tokens == 0 }

// Unlimited reports whether b limits nothing: a turn without budgets
// reads no spend.
func (b Budget) Unlimited() bool { return b.User.Unlimited() && b.Org.Unlimited() }

// Scope is what a tool handler may reach: this organisation, this user,
// this conversation, this turn. It is built only by Facts.Scope, from
// the turn's facts; nothing a model writes in arguments changes it.
type Scope struct {
	OrgID          string
	UserID         string
	ConversationID string
	TurnID         string
	// ChannelID is the turn's channel on surfaces that have one ("" on
	// the others): what short-term memory is kept for, with
	// ConversationID where there is none (Scope.Thread).
	ChannelID string `json:",omitempty"`
	// SharedMemory says the memory tools work on the organisation's
	// shared memories rather than the person's own: the agent's
	// shared_memory switch, decided by the turn, never by arguments.
	SharedMemory bool `json:",omitempty"`
	// Agent is the name of the agent answering: what an agent's own
	// data (its knowledge) is keyed by. "" outside a turn of an agent
	// (left out of JSON then, so a scope encoded before it reads the same).
	Agent string `json:",omitempty"`
	// Surface is Place.Surface: which surface's messages the message
	// tools act on ("" is Quiver's own conversations).
	Surface string `json:",omitempty"`
	// Timezone is Caller.Timezone, the caller's IANA zone ("" unknown,
	// read as UTC): the zone the message tools show times in and
	// schedule_task reads wall-clock times in.
	Timezone string `json:",omitempty"`
	// ScheduledTask is the id of the scheduled task the turn runs ("" for
	// a turn a person started): such a turn schedules no further tasks.
	ScheduledTask string `json:",omitempty"`
}

// SharedMemorySwitch is the agent switch that makes the memory tools
// save, update and forget the organisation's shared memories instead of
// the person's own (Scope.SharedMemory).
const SharedMemorySwitch = "shared_memory"

// Scope is the turn's tool scope: the one place a scope is built from
// facts.
func (f Facts) Scope() Scope {
	return Scope{OrgID: f.Place.OrgID, UserID: f.Caller.UserID, ConversationID: f.Place.ConversationID, TurnID: f.TurnID,
		ChannelID: f.Place.ChannelID, SharedMemory: f.Agent.Switch(SharedMemorySwitch), Agent: f.Agent.Name,
		Surface: f.Place.Surface, Timezone: f.Caller.Timezone, ScheduledTask: f.scheduledTask()}
}

// scheduledTask is the id of the task the turn runs, "" for none.
func (f Facts) scheduledTask() string {
	if f.Scheduled == nil {
		return ""
	}
	return f.Scheduled.TaskID
}

// Thread is what a channel's or conversation's working memory is kept
// for: "channel:ID" when the scope has a channel, else
// "conversation:ID", and "" when it has neither.
func (s Scope) Thread() string {
	switch {
	case s.ChannelID != "":
		return "channel:" + s.ChannelID
	case s.ConversationID != "":
		return "conversation:" + s.ConversationID
	}
	return ""
}

// Caller describes the person behind the turn. Only DisplayName, Department
// and Organisation ever reach prompt text; UserID is for scoping.
type Caller struct {
	UserID       string
	DisplayName  string
	Department   string
	Organisation string
	// Timezone is an IANA zone name captured at turn start; empty means
	// unknown, and the turn runs in UTC and says so.
	Timezone string
	// Permissions the caller holds on this surface ("manage_messages", ...).
	Permissions []string
}

// Place locates the conversation. Ids are never shown to the model.
type Place struct {
	OrgID          string
	ConversationID string
	// ChannelID is the chat channel on surfaces that have channels
	// (Discord); empty elsewhere.
	ChannelID string
	// CommunityID is the community the channel belongs to (a Discord
	// server); empty on surfaces without one.
	CommunityID string
	// Surface names where the conversation happens, as package surface
	// names surfaces ("discord"); "" is Quiver's own conversations (the
	// web chat, and the API and CLI that store the same conversations).
	// It decides which message tools the turn may declare.
	Surface string
}

// Agent is the configured agent as the turn sees it.
type Agent struct {
	Name string
	// Prompt is the admin-authored system prompt.
	Prompt tmpl.Authored
	// Allow lists optional tools, by tool name or family name. An empty list
	// allows no optional tool.
	Allow []string
	// Switches are named feature switches (the template capabilities, and
	// any switch named like a tool family). A missing name is unset:
	// Switch reports it off and Off reports it not off, and which one a
	// feature reads is part of its contract (a switch that gates tools
	// gates them only when set off).
	Switches map[string]bool
	// Deliberate overrides the organisation's Deliberate Tool Mode
	// settings for this agent; nil fields keep the organisation's.
	Deliberate Deliberate
}

// Deliberate is an agent's override of Deliberate Tool Mode settings.
type Deliberate struct {
	Enabled      *bool
	HistoryTurns *int
}

// Model is the model that runs the turn.
type Model struct {
	Provider string
	Name     string
	Caps     Capabilities
}

// Capabilities are what a model can do. Zero means it can do none of them.
// It is the one declaration of a model's capabilities: an agent's (Model.Caps)
// and an opened llm.Model's (its Capabilities method) are both this type.
// The JSON names are what an API that shows them uses.
type Capabilities struct {
	Tools            bool `json:"tools"`
	ParallelTools    bool `json:"parallel_tools"`
	Vision           bool `json:"vision"`
	Video            bool `json:"video"`
	StructuredOutput bool `json:"structured_output"`
	// DeferredTools is the provider's own deferred loading: tools sent
	// marked deferred stay out of the model's context until a tool result
	// references them (Anthropic's defer_loading and tool_reference), so
	// loading one leaves the cached prefix as it was. It is the
	// provider's to report; an agent's declaration cannot turn it on.
	DeferredTools bool `json:"deferred_tools,omitempty"`
}

// Switch reports whether the named switch is set on.
func (a Agent) Switch(name string) bool { return a.Switches[name] }

// Off reports whether the named switch is set off; an unset switch is not.
func (a Agent) Off(name string) bool {
	on, set := a.Switches[name]
	return set && !on
}

// HasBackend reports whether the named key or backend is configured.
func (f Facts) HasBackend(name string) bool { return slices.Contains(f.Backends, name) }

// HasPermission reports whether the caller holds the permission.
func (c Caller) HasPermission(p string) bool { return slices.Contains(c.Permissions, p) }

// Location returns the caller's zone, or UTC with ok false when the turn has
// no timezone. An unknown zone name is an error: facts are validated when
// they are collected, so this only fails on facts built by hand.
func (c Caller) Location() (loc *time.Location, ok bool, err error) {
	if c.Timezone == "" {
		return time.UTC, false, nil
	}
	loc, err = LoadZone(c.Timezone)
	if err != nil {
		return nil, false, err
	}
	return loc, true, nil
}

// LoadZone loads an IANA zone by name, refusing the ambiguous names that
// time.LoadLocation accepts but a person never means ("Local", "").
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("unknown timezone %q: give an IANA name such as Europe/Paris", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown timezone %q: give an IANA name such as Europe/Paris", name)
	}
	return loc, nil
}

// ShortTermMemoryOn reports whether switches keep a short-term memory
// (update_short_term_memory, and its text in the context message): the
// memory switch, its seed name self_teaching, or short_term_memory on,
// and short_term_memory not set off.
func ShortTermMemoryOn(switches map[string]bool) bool {
	on, set := switches["short_term_memory"]
	if set && !on {
		return false
	}
	return on || switches["memory"] || switches["self_teaching"]
}
