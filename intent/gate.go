package intent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tool"
)

// User modes: a person's override of the community setting.
const (
	UserOff    = "off"
	UserFollow = "follow"
	UserOn     = "on"
)

// Settings are a community's Deliberate Tool Mode settings with a user's
// override.
type Settings struct {
	// Enabled is the community toggle.
	Enabled bool
	// UserMode is off, follow (also "") or on.
	UserMode string
	// HistoryTurns is how many recent user messages are re-scanned
	// (0–10; DefaultHistoryTurns when the community set none).
	HistoryTurns int
	// GateAlwaysOn is the community's opt-in to gating the always-on
	// helpers too (see GateOptions).
	GateAlwaysOn bool
	// ClassifierShift is the community's own shift of the classifier's
	// thresholds (Input.Shift); nil keeps the detector's.
	ClassifierShift *float64
}

// ParseUserMode validates a user mode; "" is follow.
func ParseUserMode(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", UserFollow:
		return UserFollow, nil
	case UserOff:
		return UserOff, nil
	case UserOn:
		return UserOn, nil
	}
	return "", fmt.Errorf("user mode %q: use off, follow or on", s)
}

// What a community does with the always-on helpers under the mode.
const (
	// AlwaysOnKeep keeps them declared on every turn (the default).
	AlwaysOnKeep = "keep"
	// AlwaysOnGate gates them like the optional families.
	AlwaysOnGate = "gate"
)

// ParseAlwaysOn reads "keep" or "gate" and reports whether it gates the
// always-on helpers; anything else is an error.
func ParseAlwaysOn(s string) (gate bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case AlwaysOnKeep:
		return false, nil
	case AlwaysOnGate:
		return true, nil
	}
	return false, fmt.Errorf("always-on %q: use keep or gate", s)
}

// AlwaysOnWord is ParseAlwaysOn's reverse: "gate" or "keep".
func AlwaysOnWord(gate bool) string {
	if gate {
		return AlwaysOnGate
	}
	return AlwaysOnKeep
}

// Active reports whether the mode applies: the user's "on" or "off" wins,
// "follow" uses the community toggle.
func (s Settings) Active() bool {
	switch s.UserMode {
	case UserOn:
		return true
	case UserOff:
		return false
	}
	return s.Enabled
}

// GateOptions returns the options Gate applies under these settings.
func (s Settings) GateOptions() GateOptions { return GateOptions{GateAlwaysOn: s.GateAlwaysOn} }

// Reasons the mode gives, for a tool it declares and for one it hides.
const (
	// ReasonKept explains an always-on helper the mode declares whatever
	// the conversation asks.
	ReasonKept = "always-on: kept by deliberate tool mode"
	// reasonPrefix starts the reason of a tool the mode hides.
	reasonPrefix = "deliberate tool mode: "
	// reasonPrefixGated starts it for an always-on helper hidden because
	// the community gates those too.
	reasonPrefixGated = "deliberate tool mode, always-on tools gated by the organisation: "
)

// SourceConversation is the Source of a match that stands for a target
// opened by an earlier turn of the conversation.
const SourceConversation = "conversation"

// workspaceFamily is the workspace set's family: always-on in selection,
// gated by the mode as the files target.
const workspaceFamily = "workspace"

// GateOptions are a community's choices about what Gate hides. The zero
// value keeps the always-on helpers declared.
type GateOptions struct {
	// GateAlwaysOn gates the always-on helpers (clarifying question,
	// suggestions, calculator, read_tool_result, read_transcript) like
	// the optional families, for small local models that choose better
	// from the fewest tools: each is declared only when a target that
	// holds it opens (calculate with the calculator, read_tool_result with
	// search and files); the three no target holds are then never
	// declared. False keeps them in every turn, first.
	GateAlwaysOn bool
}

// AlwaysOnHelper reports whether t is one of the always-on helpers: an
// always-on tool outside the workspace set. They widen no permission, so
// the mode keeps them unless the community opts in to gating them.
func AlwaysOnHelper(t *tool.Tool) bool {
	return t.AlwaysOn() && t.Family() != workspaceFamily
}

// RecoveryTool is the name of the mode's recovery tool (builtin/discovery):
// through it the model opens a family the gate left closed.
const RecoveryTool = "enable_tools"

// Keeps reports whether Gate declares t whatever the conversation asks:
// an always-on helper, unless o gates those too, and the recovery tool
// always (a community that gates the helpers for a small model is the
// one that most needs it).
func (o GateOptions) Keeps(t *tool.Tool) bool {
	return t.Name() == RecoveryTool || (!o.GateAlwaysOn && AlwaysOnHelper(t))
}

// Gate narrows a selected toolset to the always-on helpers (unless o gates
// them) and the tools of the open targets; every other tool joins the
// exclusions with the mode's reason. Declaration order keeps the prefix
// stable: the helpers first, in registration order, then the tools of
// open[0], then those of open[1] not yet declared, and so on (registration
// order within a target), so a conversation that keeps its targets open
// in the order they opened keeps a stable prefix. With no open target
// only the helpers are declared (none when o gates them).
func Gate(ts registry.Toolset, c *registry.Catalog, open []string, o GateOptions) registry.Toolset {
	// Each tool's targets are looked up once, and the kept tools' ranks
	// kept for Arrange.
	ranks := map[*tool.Tool]int{}
	seen := map[string]string{}
	narrowed := ts.Narrow(c, func(t *tool.Tool) (bool, string) {
		targets := TargetsOf(t)
		if r := gateRank(t, targets, open, o); r < len(open) {
			ranks[t] = r
			return true, ""
		}
		return false, hiddenReason(t, targets, o, seen)
	})
	return narrowed.Arrange(func(t *tool.Tool) int { return ranks[t] })
}

// gateRank is where Gate declares t, whose targets are given: -1 for a
// helper it keeps, else the index in open of the first open target
// holding t, or len(open) when none does (t is hidden).
func gateRank(t *tool.Tool, targets, open []string, o GateOptions) int {
	if o.Keeps(t) {
		return -1
	}
	best := len(open)
	for _, target := range targets {
		if i := slices.Index(open[:best], target); i >= 0 {
			best = i
		}
	}
	return best
}

// hiddenReason says why Gate hides t, whose targets are given. Tools hidden for the same targets
// share one reason string (seen, per Gate call), so a catalog of many
// tools of one server costs one.
func hiddenReason(t *tool.Tool, targets []string, o GateOptions, seen map[string]string) string {
	prefix := reasonPrefix
	if o.GateAlwaysOn && AlwaysOnHelper(t) {
		prefix = reasonPrefixGated
	}
	if len(targets) == 0 {
		if prefix == reasonPrefixGated {
			// No target holds it, so no message can open it.
			return reasonPrefixGated + "no request opens it, so it is never declared"
		}
		return reasonPrefix + "not a tool the mode opens"
	}
	if len(targets) == 1 && prefix == reasonPrefix {
		if r, ok := seen[targets[0]]; ok {
			return r
		}
		r := prefix + "nothing in the conversation asks for " + targets[0]
		seen[targets[0]] = r
		return r
	}
	return prefix + "nothing in the conversation asks for " + strings.Join(targets, " or ")
}

// Declared is why the mode declared one tool.
type Declared struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Explain returns, in declaration order, why Gate declared each tool of
// gated (Gate's answer for the same open targets and options): ReasonKept
// for an always-on helper kept, else OpenedBy of the match that opened
// it (see Opening). res is the turn's detection.
func Explain(gated registry.Toolset, res Result, open []string, o GateOptions) []Declared {
	out := make([]Declared, 0, gated.Len())
	for _, t := range gated.Tools() {
		reason := ReasonKept
		if !o.Keeps(t) {
			m, _ := Opening(t, res, open)
			reason = OpenedBy(m)
		}
		out = append(out, Declared{Name: t.Name(), Reason: reason})
	}
	return out
}

// Opening returns the match that opens one of t's targets: this turn's
// first match for one of them, else, for the first of them in open, a
// match with Source SourceConversation (opened by an earlier turn). False
// when none of t's targets is open.
func Opening(t *tool.Tool, res Result, open []string) (Match, bool) {
	targets := TargetsOf(t)
	for _, m := range res.Matches {
		if slices.Contains(targets, m.Target) {
			return m, true
		}
	}
	for _, target := range open {
		if slices.Contains(targets, target) {
			return Match{Target: target, Trigger: "opened earlier in this conversation", Source: SourceConversation}, true
		}
	}
	return Match{}, false
}

// OpenedBy is the reason m gives a tool it opens: `opened by: search
// (phrase "look up", pack)`; an attachment's match names the attachment,
// a "^" trigger says it opens every turn, a learned stage's match gives
// its score (`opened by: search (similarity 0.83, semantic)`), and a
// match from an earlier turn says so.
func OpenedBy(m Match) string {
	switch m.Source {
	case SourceConversation:
		return "opened by: " + m.Target + " (earlier in this conversation)"
	case SourceAttachment:
		return "opened by: " + m.Target + " (" + m.Trigger + ")"
	case SourceAlways:
		return "opened by: " + m.Target + " (custom trigger ^, every turn)"
	case SourceClassifier, SourceSemantic:
		return "opened by: " + m.Target + " (" + m.Trigger + ", " + m.Source + ")"
	}
	return "opened by: " + m.Target + " (phrase " + strconv.Quote(m.Trigger) + ", " + m.Source + ")"
}
