// Package engine builds and runs one turn: it collects the turn's facts
// once, then selects the toolset, gates it (Deliberate Tool Mode),
// assembles the request and runs the loop, which records the turn. Every
// surface goes through it: the CLI (chat, turn, call, mcp serve), the HTTP
// API and the tool console.
//
// The collect step is the only one that reads the conversation, its
// messages, its paused turn, the organisation's runtime (its settings
// version) and Deliberate Tool Mode's settings; the later steps read the
// collected facts and nothing else.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Runtime is what an organisation's settings put in force at one
// version: the catalog of built-ins under them, the organisation's
// feature switches (an agent's own switches override them), its network
// mode and the names of the keys and backends it has configured.
type Runtime struct {
	// Version is the settings version (0 when the organisation never
	// saved settings).
	Version int64
	// Catalog is the built-in catalog under the settings.
	Catalog *registry.Catalog
	// Switches are the organisation's feature switches.
	Switches map[string]bool
	// Network is the network mode in force (netguard's mode names).
	Network string
	// Backends names the configured keys and backends (turn.Facts.Backends).
	Backends []string
	// Models opens models under the settings (their keys); nil opens
	// none: a turn must then bring its model (Request.Model).
	Models ModelOpener
}

// RuntimeSource gives an organisation's runtime at its current settings
// version. It reads the settings once per call; the engine calls it once
// per turn.
type RuntimeSource interface {
	Runtime(ctx context.Context, orgID string) (Runtime, error)
}

// ModelOpener opens the model a turn runs on. An error is the
// organisation's fault (no key, an unknown provider) and reaches the
// caller as *InputError.
type ModelOpener interface {
	Open(ctx context.Context, m turn.Model) (llm.Model, error)
}

// AgentSource loads an organisation's stored agent by name, parsed.
// A missing agent is store.ErrNotFound.
type AgentSource interface {
	Agent(ctx context.Context, orgID, name string) (Agent, error)
}

// ToolSource adds, for one turn, the tools of the organisation's
// registered MCP servers to the built-in catalog (and hides the built-ins
// they replace), reaching them under the turn's network mode. It never
// fails: servers it cannot read are reported and, where a replacement
// cannot be ruled out, the built-ins it could replace are hidden.
type ToolSource interface {
	TurnCatalog(ctx context.Context, orgID, network string, base *registry.Catalog) *registry.Catalog
}

// AttachmentSource counts the files attached to an organisation's
// conversation.
type AttachmentSource interface {
	CountAttachments(ctx context.Context, orgID, conversationID string) (int, error)
}

// KnowledgeSource reports whether an organisation's agent has knowledge
// attached.
type KnowledgeSource interface {
	HasKnowledge(ctx context.Context, orgID, agent string) (bool, error)
}

// SkillSource lists the skills attached to an organisation's agent
// (store.Skills), by name.
type SkillSource interface {
	AgentSkills(ctx context.Context, orgID, agent string) ([]store.Skill, error)
}

// ShortTermSource reads the short-term memory of an organisation's
// thread (store.ShortTerms); a thread without one is store.ErrNotFound.
type ShortTermSource interface {
	GetShortTerm(ctx context.Context, orgID, thread string) (store.ShortTerm, error)
}

// Agent is an agent as a turn needs it: what the turn sees of it, the
// model it names and the other models a conversation with it may choose
// (Offers).
type Agent struct {
	Agent turn.Agent
	Model turn.Model
	// Models are the other models a person may pick for a conversation,
	// in the agent's order; nil offers the agent's own model alone.
	Models []turn.Model
}

// Repositories are the stores the engine reads and writes. Conversations
// and Messages nil means no conversation is read (quiver turn: a turn of
// an agent alone); then nothing is written either.
type Repositories struct {
	Conversations store.Conversations
	Messages      store.Messages
	Turns         store.Turns
	Intents       store.Intents
	// Branches, when set, makes a conversation's turns a tree: a turn
	// sees the messages of the branch shown only (store.Branches), and
	// follows its head (or, with Request.Replaces, goes beside a turn).
	// Nil sees every message of the conversation, in order.
	Branches store.Branches
}

// Config builds an Engine.
type Config struct {
	Repos Repositories
	// Runtime gives each organisation its runtime; required.
	Runtime RuntimeSource
	// Agents loads stored agents for requests without an Agent.
	Agents AgentSource
	// Tools adds MCP servers' tools per turn; nil adds none.
	Tools ToolSource
	// Attachments counts the files attached to a conversation
	// (turn.Facts.Attachments); nil counts none, until the attachments
	// repository lands.
	Attachments AttachmentSource
	// Knowledge reports whether an agent has knowledge attached
	// (turn.Facts.Knowledge); nil reports none, until the knowledge
	// repository lands.
	Knowledge KnowledgeSource
	// Skills lists the skills attached to the turn's agent
	// (turn.Facts.Skills), once per turn; nil lists none, so load_skill
	// is left out.
	Skills SkillSource
	// ShortTerms reads the short-term memory of the turn's channel or
	// conversation into turn.Facts.ShortTermMemory, when the turn's
	// switches keep one (turn.ShortTermMemoryOn); nil reads none.
	ShortTerms ShortTermSource
	// Budgets reads the budgets a turn is held to (turn.Facts.Budget) and
	// the month's spend: a turn whose person or organisation has used a
	// budget up is refused with a *budget.ExceededError before anything
	// runs (a dry run is not). Nil holds turns to no budget.
	Budgets budget.Store
	// Detector is Deliberate Tool Mode's matcher; nil turns the mode off.
	Detector *intent.Detector
	// Semantic, when set with Embeddings, is the mode's semantic stage:
	// after the detector, it compares the message with the families'
	// exemplars under the organisation's embedding model (none: the
	// stage is skipped). Nil, the default, runs no such stage.
	Semantic *intent.Semantic
	// Embeddings gives each organisation its embedding model, for
	// Semantic.
	Embeddings embed.Source
	// Runner runs the loop; required to Run.
	Runner *agent.Runner
	// Dispatcher runs single calls (the console, quiver call, mcp serve).
	Dispatcher *dispatch.Dispatcher
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
	// NewID returns a fresh id with the prefix; nil means ids.Random.
	NewID func(prefix string) string
	// Logger; nil discards.
	Logger *slog.Logger
	// Prompts caches rendered system prompts (prompt.Cache); nil means a
	// cache of prompt.DefaultCacheEntries.
	Prompts *prompt.Cache
	// Selections keeps turns' selected and gated toolsets with their
	// requests' fixed parts (see Selections); nil means a cache of
	// DefaultSelectionEntries.
	Selections *Selections
	// Deferral is when a large toolset is declared in part and found
	// with the tool-discovery tools; the zero value defers past its
	// defaults.
	Deferral Deferral
	// NoCache keeps nothing between turns: every turn selects, gates and
	// renders anew (Prompts and Selections are ignored). For measuring
	// what the caches save, and for ruling them out.
	NoCache bool
}

// Engine builds and runs turns. It is safe for concurrent use by many
// conversations.
type Engine struct{ cfg Config }

// New returns an Engine, panicking when Runtime is missing.
func New(cfg Config) *Engine {
	if cfg.Runtime == nil {
		panic("engine: Config.Runtime is required")
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = ids.Random{}.New
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.NoCache:
		cfg.Prompts, cfg.Selections = nil, nil
	case cfg.Prompts == nil:
		cfg.Prompts = prompt.NewCache(0)
	}
	if cfg.Selections == nil && !cfg.NoCache {
		cfg.Selections = NewSelections(0)
	}
	return &Engine{cfg: cfg}
}

// Errors a caller maps to its wire: each is the caller's fault.
var (
	// ErrNoConversation: the conversation does not exist or is another
	// user's (the two are not told apart).
	ErrNoConversation = errors.New("no such conversation")
	// ErrNoTurn: the stored turn asked for is not in the conversation.
	ErrNoTurn = errors.New("no such turn in this conversation")
)

// InputError is a fault of the request (an agent that no longer exists,
// a model that cannot be opened, an invalid definition): its message is
// for the caller.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// inputf returns an *InputError.
func inputf(format string, args ...any) error { return &InputError{Msg: fmt.Sprintf(format, args...)} }

// isNotFound reports whether err is the store's not-found.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// StaticRuntime is a RuntimeSource that gives every organisation rt (a
// turn of an agent alone, as quiver turn prepares).
func StaticRuntime(rt Runtime) RuntimeSource { return staticRuntime{rt} }

type staticRuntime struct{ rt Runtime }

// Runtime implements RuntimeSource.
func (s staticRuntime) Runtime(context.Context, string) (Runtime, error) { return s.rt, nil }
