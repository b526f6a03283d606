package httpapi

import (
	"context"
	"encoding/json"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
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
	TurnID  string              `json:"turn_id,omitempty"`
	Agent   string              `json:"agent"`
	Model   string              `json:"model"`
	System  string              `json:"system"`
	Context string              `json:"context"`
	Tools   []prompt.Definition `json:"tools"`
	// Origins maps each declared tool of an MCP server, by the name the
	// model calls (a wire name, server__tool), to the server and the
	// tool's name there, in declaration order; empty when the turn
	// declares none.
	Origins  []ToolOrigin         `json:"origins"`
	Sizes    prompt.Sizes         `json:"sizes"`
	Excluded []registry.Exclusion `json:"excluded"`
	// Intent lists Deliberate Tool Mode's matches; empty when the mode is
	// off or matched nothing.
	Intent []IntentMatch `json:"intent"`
	// Declared says, for a turn under Deliberate Tool Mode, why each
	// declared tool is (an always-on helper kept, or the family that
	// opened it), in declaration order (a stored turn's as recorded when
	// it started); empty when the mode is off, and for a turn stored
	// before the reasons were recorded.
	Declared []intent.Declared `json:"declared"`
	Warnings []string          `json:"warnings"`
	// History is how the turn's first model call fits the model's context
	// window: the estimated tokens, how many earlier messages it leaves
	// out and the marker the model sees instead.
	History *agent.Cut `json:"history,omitempty"`
	// Steps is how many model calls the stored turn made; 0 for a draft.
	Steps int `json:"steps"`
	// Messages are the model's view of the conversation the calls were
	// made from: the earlier history, then (from TurnStart) the turn's
	// own messages, earlier tool results included; empty when the
	// engine rebuilds no calls.
	Messages []ModelMessage `json:"messages"`
	// TurnStart is the index in Messages of the turn's first message.
	TurnStart int `json:"turn_start"`
	// Omitted counts the earliest messages no call sent (each cut them
	// behind its marker), which Messages leaves out.
	Omitted int `json:"omitted"`
	// Calls are the turn's model calls as they were sent (a stored
	// turn's, rebuilt from its transcript), or a draft's first as it
	// would be: each sends System, Tools, then its part of Messages.
	Calls []ModelCall `json:"calls"`
}

// ModelMessage is one message of the model's view.
type ModelMessage struct {
	Role string `json:"role" enum:"user,assistant,tool"`
	Text string `json:"text,omitempty"`
	// Images counts the images the message carries (not sent here).
	Images    int              `json:"images,omitempty"`
	ToolCalls []ModelToolCall  `json:"tool_calls,omitempty"`
	Results   []ModelToolReply `json:"results,omitempty"`
}

// ModelToolCall is a tool call of an assistant message.
type ModelToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ModelToolReply is one tool result of a tool message.
type ModelToolReply struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// ModelCall is one model call: it sent Messages[i] for each i of Kept,
// then Cut.Marker when there is one, then Messages[From:End].
type ModelCall struct {
	Kept []int     `json:"kept"`
	From int       `json:"from"`
	End  int       `json:"end"`
	Cut  agent.Cut `json:"cut"`
}

// AgentValidation is what ValidateAgent found in a valid definition.
type AgentValidation struct {
	// Name is the agent's name.
	Name string
	// Warnings are the prompt template's warnings.
	Warnings []string
	// Allowlist are the allowlist's warnings (registry.Catalog.CheckAllowlist):
	// entries naming no tool, family or registered MCP server, or repeated.
	Allowlist []registry.Warning
}

// ToolOrigin is where a declared tool of an MCP server comes from.
type ToolOrigin struct {
	// Name is the name the model calls.
	Name string `json:"name"`
	// Server is the registered server's name.
	Server string `json:"server"`
	// Tool is the tool's name on that server.
	Tool string `json:"tool"`
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
	// Server and ServerTool name the MCP server a tool comes from and
	// the tool's name there; empty for built-in tools.
	Server     string `json:"server,omitempty"`
	ServerTool string `json:"server_tool,omitempty"`
}

// Catalog is the tool catalog with its definition ceilings.
type Catalog struct {
	Tools             []ToolView `json:"tools"`
	AlwaysPaidChars   int        `json:"always_paid_chars"`
	AlwaysPaidCeiling int        `json:"always_paid_ceiling"`
	WidestChars       int        `json:"widest_chars"`
	WidestCeiling     int        `json:"widest_ceiling"`
}

// Engine runs turns for the API. NewEngine implements it over the turn
// engine every surface uses; tests use a fake. Errors that are the caller's fault
// (an unknown agent, a message too long) are *BadRequest; anything else is
// an internal error whose detail is logged, never sent.
type Engine interface {
	// Begin collects the facts of a turn of message in c's conversation
	// (a new turn, or the answer to the conversation's paused turn): it
	// reads the conversation, its messages and the organisation's
	// settings once, and writes nothing. A conversation that is not c's
	// is engine.ErrNoConversation, and so is one that does not exist
	// unless start says how to start it (a first message): then the turn
	// is New, with start's agent and model. A start naming another agent
	// than a stored conversation's is a *BadRequest. turnID names the new
	// turn ("" gives a fresh id); a turn answering a paused one keeps
	// that turn's id. replaces, when set, names a turn of the
	// conversation the new turn goes beside (engine.Request.Replaces):
	// a regenerated answer or an edited message.
	Begin(ctx context.Context, c Caller, conversationID, message, turnID, replaces string, start *NewConversation) (PendingTurn, error)
	// ModelChoices lists the models a conversation with c's
	// organisation's agent may run on (engine.Engine.ModelChoices).
	ModelChoices(ctx context.Context, c Caller, agentName string) ([]engine.ModelChoice, error)
	// CheckModel returns nil when a conversation with the agent may run
	// on ref, else an *engine.InputError saying why not.
	CheckModel(ctx context.Context, c Caller, agentName, ref string) error
	// Run prepares and runs a begun turn. Events go to emit as they
	// happen, ending with agent.EventDone or agent.EventError; emit is
	// never called after Run returns. Cancelling ctx cancels the turn,
	// which is then recorded as interrupted.
	Run(ctx context.Context, t PendingTurn, emit func(agent.Event)) error
	// Inspect returns the request message would send in the conversation
	// now (or, with turnID set, the request of that stored turn's
	// toolset, and its model calls as sent); nothing runs and nothing is
	// written. A draft has no TurnID.
	Inspect(ctx context.Context, c Caller, conversationID, turnID, message string) (Inspection, error)
	// InspectDraft returns the request message would send to the named
	// agent in a new conversation of c's, which it does not create:
	// nothing runs, nothing is written, and the draft has no TurnID. An
	// agent the organisation does not have is a *BadRequest.
	InspectDraft(ctx context.Context, c Caller, agentName, message string) (Inspection, error)
	// ValidateAgent parses an agent definition (the YAML an admin
	// authored), renders its prompt once against the widest toolset c's
	// organisation could give it, and checks its allowlist against the
	// organisation's tools and registered MCP servers: the agent's name
	// and the warnings. A fault of the definition is a *BadRequest;
	// warnings never are.
	ValidateAgent(ctx context.Context, c Caller, definition []byte) (AgentValidation, error)
	// Catalog lists every tool c's organisation has (built-ins and its
	// enabled MCP servers' tools) with its size, and the ceilings.
	Catalog(ctx context.Context, c Caller) (Catalog, error)
	// Settings returns c's organisation's settings; keys only say whether
	// they are set, never their value.
	Settings(ctx context.Context, c Caller) (settings.View, error)
	// UpdateSettings validates u and saves it as one write: a bad field
	// is a *settings.InvalidError (400) and a stale u.Version
	// settings.ErrConflict (409), both writing nothing. It returns the
	// settings now in force.
	UpdateSettings(ctx context.Context, c Caller, u settings.Update) (settings.View, error)
	// TestConnection asks an OpenAI-compatible server for its models
	// (settings.Service.TestConnection), writing nothing: what a save
	// would refuse is a *settings.InvalidError (400), a server that fails
	// the test a *settings.ConnectionError (400 connection_failed).
	TestConnection(ctx context.Context, c Caller, t settings.ConnectionTest) (settings.ConnectionReport, error)
	// RunTool runs one tool by hand as c (the tool console): the tool must
	// be in the toolset the agent would get from c (before Deliberate
	// Tool Mode), and it runs through the dispatcher with c's scope and
	// limits, like a model's call. A tool's own failure is a ToolRun with
	// IsError, not an error.
	RunTool(ctx context.Context, c Caller, agentName, tool string, args json.RawMessage) (ToolRun, error)
	// ConsoleTools lists the tools RunTool accepts for that agent and c,
	// with their input schemas, in declaration order.
	ConsoleTools(ctx context.Context, c Caller, agentName string) ([]ConsoleTool, error)
	// ModelStatus says whether the agent's model can be reached with the
	// configured keys (nothing is sent to a provider except, when no
	// provider is configured at all, a probe of the local Ollama), and
	// when not, how to connect one.
	ModelStatus(ctx context.Context, c Caller, agentName string) (ModelStatus, error)
}

// NewConversation is how a first message starts a conversation that is
// not stored yet.
type NewConversation struct {
	// Agent names the organisation's agent; required.
	Agent string
	// Model is the agent's model to run on (Agent.Offers); "" its own.
	Model string
}

// PendingTurn is a turn Engine.Begin collected the facts of, not yet run.
type PendingTurn interface {
	// Conversation is the conversation as read at the turn's start; for
	// a New turn, the one it starts (ID, organisation, owner, agent and
	// model), not stored yet.
	Conversation() store.Conversation
	// New reports that the conversation is not stored yet: this turn's
	// message is its first.
	New() bool
	// Answers reports whether the turn answers the conversation's paused
	// turn.
	Answers() bool
	// TurnID is the turn's id (the paused turn's when it answers it).
	TurnID() string
	// LastSeq is the Seq of the conversation's last message when the
	// facts were read (0 for none): the stamp that tells whether another
	// turn ran since.
	LastSeq() int64
}

// ToolRun is the outcome of one tool run from the console.
type ToolRun struct {
	Tool    string `json:"tool"`
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
	// DurationMS is how long the call took.
	DurationMS int64 `json:"duration_ms"`
}

// ConsoleTool is a tool the console can run, with its input schema.
type ConsoleTool struct {
	Name        string          `json:"name"`
	Family      string          `json:"family"`
	Description string          `json:"description"`
	Access      string          `json:"access"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ModelStatus is whether an agent's model is connected.
type ModelStatus struct {
	// Model is "provider:name".
	Model     string `json:"model"`
	Connected bool   `json:"connected"`
	// Help says how to connect a model; empty when connected.
	Help string `json:"help,omitempty"`
}

// Conflict is an Engine error for a write based on stale data; its message
// is shown to the caller (409).
type Conflict struct{ Msg string }

func (e *Conflict) Error() string { return e.Msg }

// BadRequest is an Engine error caused by the request; its message is
// shown to the caller.
type BadRequest struct{ Msg string }

func (e *BadRequest) Error() string { return e.Msg }
