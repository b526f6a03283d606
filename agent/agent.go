// Package agent is the loop that runs a turn: a model step, then a dispatch
// step, until the model answers, asks a clarifying question, hits the step
// limit or the turn is cancelled. Everything is persisted as it happens, so
// a crash mid-turn loses at most the step in flight.
package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// DefaultMaxSteps is the step limit when Config.MaxSteps is zero.
const DefaultMaxSteps = 12

// Defaults of the tool-call limits (Config.MaxCallsPerStep,
// MaxCallsPerTurn, MaxConcurrentCalls): above what a real agent asks for
// in one reply or one turn, far below what a runaway model emits.
const (
	DefaultMaxCallsPerStep    = 16
	DefaultMaxCallsPerTurn    = 64
	DefaultMaxConcurrentCalls = 4
	// DefaultMaxExpansions bounds how many calls of one turn may grow
	// its declared tools (tool.Effect.Declare).
	DefaultMaxExpansions = 3
)

// Repositories are the parts of the store a Runner uses: the turn
// record (read on resume), the transcript, and the writes that record a
// step — the conversation a turn claims, the turn, its messages and the
// usage of each model call — in one transaction each (TurnWriter).
type Repositories interface {
	store.Turns
	store.TurnWriter
	store.Messages
}

// Config configures a Runner. Store and Dispatcher are required.
type Config struct {
	Store      Repositories
	Dispatcher *dispatch.Dispatcher
	// MaxSteps bounds the model steps of one turn; zero means 12.
	MaxSteps int
	// MaxCallsPerStep bounds the tool calls run from one model reply;
	// the calls past it are not run, each answered with a refusal that
	// names the limit, so the model can ask again with fewer. Zero means
	// DefaultMaxCallsPerStep.
	MaxCallsPerStep int
	// MaxCallsPerTurn bounds the tool calls run in one turn, across its
	// steps (a resumed turn counts the calls it ran before its pause);
	// past it calls are refused likewise and the model goes on to answer.
	// Zero means DefaultMaxCallsPerTurn.
	MaxCallsPerTurn int
	// MaxExpansions bounds how many calls of one turn may declare more
	// tools (tool.Effect.Declare); a call past it declares nothing and
	// its result says so. Zero means DefaultMaxExpansions.
	MaxExpansions int
	// MaxConcurrentCalls bounds how many read-only calls of one step run
	// at once (writes always run alone). Zero means
	// DefaultMaxConcurrentCalls.
	MaxConcurrentCalls int
	// MaxHistory bounds the earlier messages sent with each model call;
	// zero means 200.
	MaxHistory int
	// Prices gives per-model prices; a model without one costs zero.
	Prices map[string]Price
	// Budget checks, before every model call, that the turn's person and
	// organisation have budget left this month (turn.Facts.Budget,
	// against the usage committed so far); a call it refuses with a
	// *budget.ExceededError is not made and the turn stops with
	// StopBudget and the error's message. Nil checks nothing.
	Budget BudgetChecker
	// Retry is the retry policy for provider errors; zero means defaults.
	Retry Retry
	// Sleep waits d or until ctx ends; nil means a timer. Tests replace it so
	// that no test sleeps.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock; nil means clock.Now.
	Now func() time.Time
	// IDs makes the ID ("turn_…") of a turn started without one; nil
	// means ids.Random.
	IDs ids.Source
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Windows gives each model's context window by "provider:model"
	// (zero fields take DefaultWindow's and DefaultReserve); nil means
	// DefaultWindow for every model. Each model call's history is cut to
	// fit it (see Cut).
	Windows func(ref string) Window
	// ModelIdle bounds the wait for a model stream's next event: a
	// stream silent that long is cancelled and fails with an
	// llm.ErrTimeout error, which Retry retries when the call had
	// produced nothing yet (else the turn fails with one sentence for the
	// user). Zero means DefaultModelIdle (60 s); negative, no bound.
	ModelIdle time.Duration
	// MaxDuration bounds one Run or Resume in wall time: past it the
	// turn is stopped, recorded as interrupted, and ends with an
	// EventError then done with stop StopTimeLimit. Zero means
	// DefaultMaxDuration (15 min); negative, no bound.
	MaxDuration time.Duration
	// AfterFunc starts the timers of ModelIdle and MaxDuration; nil
	// means time.AfterFunc. Tests replace it to fire them without
	// waiting.
	AfterFunc func(d time.Duration, f func()) Timer
}

// Runner runs turns. It is safe for concurrent use by many conversations.
type Runner struct{ cfg Config }

// New returns a Runner, panicking when Store or Dispatcher is missing.
func New(cfg Config) *Runner {
	if cfg.Store == nil || cfg.Dispatcher == nil {
		panic("agent: Config.Store and Config.Dispatcher are required")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	cfg.MaxCallsPerStep = orDefault(cfg.MaxCallsPerStep, DefaultMaxCallsPerStep)
	cfg.MaxCallsPerTurn = orDefault(cfg.MaxCallsPerTurn, DefaultMaxCallsPerTurn)
	cfg.MaxConcurrentCalls = orDefault(cfg.MaxConcurrentCalls, DefaultMaxConcurrentCalls)
	cfg.MaxExpansions = orDefault(cfg.MaxExpansions, DefaultMaxExpansions)
	if cfg.MaxHistory <= 0 {
		cfg.MaxHistory = 200
	}
	cfg.Retry = cfg.Retry.withDefaults()
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	cfg.IDs = ids.OrRandom(cfg.IDs)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg = cfg.withDeadlines()
	return &Runner{cfg: cfg}
}

// orDefault is n, or def when n is not positive.
func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start is what a new turn needs: its facts (collected once), its frozen
// toolset and assembled request, the model, and the user's message.
type Start struct {
	Facts   turn.Facts
	Toolset registry.Toolset
	Request prompt.Request
	Model   llm.Model
	Message string
	// Declared is why a gate (Deliberate Tool Mode) declared each tool of
	// Toolset, recorded with the turn (store.Turn.Declared); nil when no
	// gate applied.
	Declared []store.Exclusion
	// History is the conversation's messages as collected at the turn's
	// start (engine's collect step), so that the runner does not read
	// them again; nil reads them from the store.
	History []store.Message
	// Branch records the turn on its conversation's tree
	// (store.Branches): following Parent ("" for a first message), as the
	// conversation's head, in the write that starts it. False records it
	// on no branch (a conversation read whole).
	Branch bool
	Parent string
	// Expand grows the declared tools when a call asks
	// (tool.Effect.Declare); nil declares nothing more.
	Expand Expander
}

// Expander grows a turn's declared tools mid-turn: Expand returns ts
// with the named tools the turn's selection allowed appended after its
// own (registry.Catalog.Extend), and the tools it added, which the loop
// declares from the next model step on. It is called from the loop's
// goroutine.
type Expander interface {
	Expand(ts registry.Toolset, names []string) (registry.Toolset, []*tool.Tool)
	// Available returns the tools Expand may add from, declared or not,
	// in registration order: what the tool-discovery tools search
	// (tool.Catalog).
	Available() []*tool.Tool
}

// BudgetChecker is Config.Budget (budget.Guard).
type BudgetChecker interface {
	Check(ctx context.Context, f turn.Facts) error
}

// Outcome is how a turn ended.
type Outcome struct {
	TurnID string
	// Stop is StopAnswer, StopPause, StopStepLimit, StopBudget,
	// StopCancelled, StopTimeLimit or StopError.
	Stop  string
	Text  string
	Pause *tool.Pause
	Usage llm.Usage
	// CostMicros is the turn's cost so far, in millionths of the currency.
	CostMicros int64
}

// Ways a turn stops.
const (
	StopAnswer    = "answer"
	StopPause     = "pause"
	StopStepLimit = "step_limit"
	// StopBudget: a budget was used up before a model call.
	StopBudget    = "budget"
	StopCancelled = "cancelled"
	StopError     = "error"
)

// scope is the dispatch scope of a turn, from its facts.
func scope(f turn.Facts) tool.Scope {
	return f.Scope()
}
