package deliberate

import (
	"context"

	"github.com/quiverhq/quiver/intent"
)

// Community is what an organisation's configuration gives detection and
// the gate, whether or not the mode is on: its compiled custom triggers,
// the re-scan depth a turn uses and its always-on choice.
type Community struct {
	// Custom are the compiled custom triggers; nil means none.
	Custom *intent.Custom
	// HistoryTurns is the re-scan depth (Settings.Depth).
	HistoryTurns int
	// GateAlwaysOn gates the always-on helpers too.
	GateAlwaysOn bool
	// ClassifierShift is the organisation's own classifier shift; nil
	// keeps the deployment's.
	ClassifierShift *float64
}

// DefaultCommunity is the configuration of no organisation: no custom
// triggers, the default depth, and the helpers kept.
func DefaultCommunity() Community { return Community{HistoryTurns: intent.DefaultHistoryTurns} }

// Community reads the organisation's custom triggers and settings (see
// Custom and Settings); one that never saved any gets DefaultCommunity.
func (s *Service) Community(ctx context.Context, orgID string) (Community, error) {
	custom, err := s.Custom(ctx, orgID)
	if err != nil {
		return Community{}, err
	}
	set, err := s.Settings(ctx, orgID)
	if err != nil {
		return Community{}, err
	}
	return Community{Custom: custom, HistoryTurns: set.Depth(), GateAlwaysOn: set.GateAlwaysOn, ClassifierShift: set.ClassifierShift}, nil
}
