package config

import (
	"fmt"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/store"
)

// or is v, or def when v is zero (unset).
func or[T int | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// ToolCalls bounds the tool calls a model asks for. Zero values take the
// defaults: 16 calls run per step, 64 per turn, 4 read-only calls at
// once. A call past a limit is not run; it is answered with a refusal
// that names the limit.
type ToolCalls struct {
	// PerStep is how many calls of one model reply run (1–1000).
	PerStep int `yaml:"per_step"`
	// PerTurn is how many calls run in one turn, across its steps
	// (1–100000, at least PerStep when both are set).
	PerTurn int `yaml:"per_turn"`
	// Concurrent is how many read-only calls of one step run at once
	// (1–256); writes always run alone.
	Concurrent int `yaml:"concurrent"`
}

func (c ToolCalls) validate() error {
	limits := []struct {
		name   string
		n, max int
	}{{"per_step", c.PerStep, 1000}, {"per_turn", c.PerTurn, 100000}, {"concurrent", c.Concurrent, 256}}
	for _, l := range limits {
		if l.n < 0 || l.n > l.max {
			return fmt.Errorf("tool_calls.%s %d: use 1–%d, or 0 for the default", l.name, l.n, l.max)
		}
	}
	// Compared as they take effect: an unset one is its default.
	perStep, perTurn := or(c.PerStep, agent.DefaultMaxCallsPerStep), or(c.PerTurn, agent.DefaultMaxCallsPerTurn)
	if perTurn < perStep {
		return fmt.Errorf("tool_calls.per_turn %d is below per_step %d (an unset one is its default)", perTurn, perStep)
	}
	return nil
}

// StoredResults bounds the tool result bodies kept for read_tool_result
// (those over dispatch's inline threshold), in bytes. Zero values take the
// defaults: 64 MiB per conversation, 256 MiB per user. When a new body
// would pass either, the oldest bodies of that conversation, then of that
// user, are evicted to make room; a body larger than a limit on its own is
// not stored (the model keeps its preview).
type StoredResults struct {
	// ConversationBytes bounds one conversation's stored bodies (1 MiB–1 TiB).
	ConversationBytes int64 `yaml:"conversation_bytes"`
	// UserBytes bounds one user's stored bodies, across their
	// conversations (1 MiB–1 TiB, at least ConversationBytes when both are
	// set).
	UserBytes int64 `yaml:"user_bytes"`
}

func (s StoredResults) validate() error {
	const lo, hi = 1 << 20, 1 << 40
	for _, l := range []struct {
		name string
		n    int64
	}{{"conversation_bytes", s.ConversationBytes}, {"user_bytes", s.UserBytes}} {
		if l.n != 0 && (l.n < lo || l.n > hi) {
			return fmt.Errorf("stored_results.%s %d: use 1 MiB (1048576) up to 1 TiB, or 0 for the default", l.name, l.n)
		}
	}
	conv, user := or(s.ConversationBytes, dispatch.DefaultConversationBytes), or(s.UserBytes, dispatch.DefaultUserBytes)
	if user < conv {
		return fmt.Errorf("stored_results.user_bytes %d is below conversation_bytes %d (an unset one is its default)", user, conv)
	}
	return nil
}

// Quota is s as the store takes it; zero fields stay zero, for dispatch
// to give their defaults.
func (s StoredResults) Quota() store.ResultQuota {
	return store.ResultQuota{ConversationBytes: s.ConversationBytes, UserBytes: s.UserBytes}
}
