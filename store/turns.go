package store

import (
	"context"
	"time"
	"unicode/utf8"
)

// Turn statuses.
const (
	TurnRunning     = "running"
	TurnPaused      = "paused"
	TurnDone        = "done"
	TurnInterrupted = "interrupted"
	TurnFailed      = "failed"
)

// Turn is a stored turn: who started it, in which zone, with which toolset.
type Turn struct {
	ID             string
	OrgID          string
	UserID         string
	ConversationID string
	// ParentID is the turn this one follows in its conversation (see
	// Branches); "" for a first message, and for a turn of no branch
	// (a console run, an MCP session). It is kept as first stored: a
	// turn stored again keeps its parent.
	ParentID string
	Agent    string
	// Model is the "provider:model" reference the turn runs on.
	Model string
	// Timezone is the IANA zone captured at turn start; "" means UTC.
	Timezone string
	// Payer is who is billed; data only.
	Payer string
	// Tools is the frozen toolset, in declaration order.
	Tools []string
	// Excluded is why each catalog tool was left out of Tools when the turn
	// started, in the order the toolset gave. nil means not recorded (a
	// turn stored before exclusions were); an empty non-nil slice, nothing
	// left out. A store keeps at most MaxTurnExclusions entries (the first
	// ones) and at most MaxExclusionReason bytes of each reason, cut on a
	// rune boundary; see BoundExclusions.
	Excluded []Exclusion
	// Declared is why each tool of Tools was declared, in declaration
	// order, when a gate (Deliberate Tool Mode) chose them ("always-on:
	// kept by deliberate tool mode", "opened by: search (…)"). nil means
	// no gate applied (or not recorded); bounded as Excluded is.
	Declared []Exclusion
	// Selected is how many tools selection gave the turn before a gate
	// narrowed them to Tools (registry.Toolset.Selected); 0 when not
	// recorded, so a reader takes at least len(Tools).
	Selected int
	// Status is one of the Turn… statuses.
	Status string
	// Question and Suggested hold the pending clarifying question of a
	// paused turn; empty otherwise.
	Question  string
	Suggested string
	// Steps is the number of model steps taken so far.
	Steps     int
	StartedAt time.Time
	// EndedAt is zero while the turn runs or is paused.
	EndedAt time.Time
}

// Exclusion is one tool a turn left out and why, in the words of the
// toolset that left it out.
type Exclusion struct {
	Name   string
	Reason string
}

// Bounds on what a store keeps of Turn.Excluded: a catalog with many MCP
// tools, or a reason quoting a long server error, must not make every
// turn record large.
const (
	MaxTurnExclusions  = 500
	MaxExclusionReason = 500 // bytes
)

// BoundExclusions returns ex as a store keeps it: its first
// MaxTurnExclusions entries, each reason cut to at most MaxExclusionReason
// bytes without splitting a rune. nil stays nil and empty stays empty; ex
// itself is not modified.
func BoundExclusions(ex []Exclusion) []Exclusion {
	if ex == nil {
		return nil
	}
	out := make([]Exclusion, 0, min(len(ex), MaxTurnExclusions))
	for _, e := range ex[:min(len(ex), MaxTurnExclusions)] {
		e.Reason = truncateUTF8(e.Reason, MaxExclusionReason)
		out = append(out, e)
	}
	return out
}

// truncateUTF8 returns the longest prefix of s of at most n bytes that
// does not end inside a multi-byte rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Turns stores turns.
type Turns interface {
	// PutTurn inserts the turn or replaces the stored one with the same ID,
	// keeping t.Excluded and t.Declared as BoundExclusions returns them.
	PutTurn(ctx context.Context, t Turn) error
	// GetTurn returns the turn with that ID in that organisation.
	GetTurn(ctx context.Context, orgID, id string) (Turn, error)
	// InterruptTurns marks every running turn, in every organisation,
	// started before startedBefore and that is no conversation's run (no
	// Run of its organisation has its ID as TurnID) as TurnInterrupted
	// ended at `at`, and returns how many: a server starting records the
	// turns a crash cut short before runs were stored, or whose final
	// write failed after their run ended. A running turn that still has a
	// Run is left alone, live or not: on PostgreSQL it may be another
	// live replica's, and a dead replica's is the lease reaper's
	// (Runs.ReapRuns, which a starting SQLite server calls first to reap
	// every leftover run). A turn stored as running before its Run is
	// claimed, or still running after its Run ended, is an orphan to a
	// server starting meanwhile. Paused and finished turns are left alone.
	InterruptTurns(ctx context.Context, startedBefore, at time.Time) (int, error)
}
