package intent

import (
	"fmt"
	"slices"
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

// Gate narrows a selected toolset to the tools of the open targets; every
// other tool joins the exclusions with the mode's reason. Declaration
// order follows open: the tools of open[0] first, then those of open[1]
// not yet declared, and so on (registration order within a target), so a
// conversation that keeps its targets open in the order they opened keeps
// a stable prefix. With no open target no tool is declared.
func Gate(ts registry.Toolset, c *registry.Catalog, open []string) registry.Toolset {
	rank := func(t *tool.Tool) int {
		best := len(open)
		for _, target := range TargetsOf(t) {
			if i := slices.Index(open, target); i >= 0 && i < best {
				best = i
			}
		}
		return best
	}
	narrowed := ts.Narrow(c, func(t *tool.Tool) (bool, string) {
		if rank(t) < len(open) {
			return true, ""
		}
		if len(TargetsOf(t)) == 0 {
			return false, "deliberate tool mode: not a tool the mode opens"
		}
		return false, "deliberate tool mode: nothing in the conversation asks for " + strings.Join(TargetsOf(t), " or ")
	})
	return narrowed.Arrange(rank)
}
