// Package deliberate is Deliberate Tool Mode's stored configuration: the
// organisation's toggle and re-scan depth (and whether the always-on
// helpers are gated too), its custom triggers, and each user's mode.
//
// It is the one place that validates and writes them: the HTTP API and
// `quiver triggers` both call [Service], and show its errors' messages as
// they are. What a turn does with the configuration (detect, gate) is
// package intent's.
package deliberate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/store"
)

// Service reads and writes the configuration. Store is required; a nil
// Now means clock.Now. Safe for concurrent use when Store is.
type Service struct {
	Store store.Intents
	// Now stamps what is written (in UTC).
	Now func() time.Time
}

// Settings is an organisation's stored configuration.
type Settings struct {
	OrgID   string
	Enabled bool
	// HistoryTurns is how many recent user messages are re-scanned; -1
	// means intent.DefaultHistoryTurns (see Depth).
	HistoryTurns int
	// GateAlwaysOn gates the always-on helpers too; false keeps them
	// declared on every turn.
	GateAlwaysOn bool
	// ClassifierShift moves the classifier's thresholds for this
	// organisation (-MaxShift..MaxShift, in steps of 0.01; positive opens
	// less); nil takes the deployment's (intent.classifier_shift).
	ClassifierShift *float64
}

// MaxShift bounds a community's ClassifierShift (intent.MaxShift).
const MaxShift = intent.MaxShift

// Depth is the re-scan depth a turn uses: HistoryTurns, or the default
// for -1.
func (s Settings) Depth() int {
	if s.HistoryTurns < 0 {
		return intent.DefaultHistoryTurns
	}
	return s.HistoryTurns
}

// Summary describes the re-scan depth and the always-on choice for
// people, as `quiver triggers mode` confirms them: "history: 2;
// always-on helpers: gate", the stored -1 named as the default it
// stands for ("history: default 4").
func (s Settings) Summary() string {
	depth := "default " + strconv.Itoa(intent.DefaultHistoryTurns)
	if s.HistoryTurns >= 0 {
		depth = strconv.Itoa(s.HistoryTurns)
	}
	out := fmt.Sprintf("history: %s; always-on helpers: %s", depth, intent.AlwaysOnWord(s.GateAlwaysOn))
	if s.ClassifierShift != nil {
		out += fmt.Sprintf("; classifier shift: %+.2f", *s.ClassifierShift)
	}
	return out
}

// Change is a change to an organisation's settings; nil fields keep
// their stored value.
type Change struct {
	Enabled bool
	// HistoryTurns is 0–intent.MaxHistoryTurns, or -1 for the default.
	HistoryTurns *int
	GateAlwaysOn *bool
	// ClassifierShift, when set, becomes the organisation's shift
	// (-MaxShift..MaxShift, rounded to 0.01); DeploymentShift instead
	// clears it, taking the deployment's again. Both at once is refused.
	ClassifierShift *float64
	DeploymentShift bool
}

// InvalidError is bad input: nothing was written. Its message is for
// people, as both surfaces show it.
type InvalidError struct{ Msg string }

// Error returns Msg.
func (e *InvalidError) Error() string { return e.Msg }

// Errors of trigger writes, matched with errors.Is on a *TriggerError.
var (
	// ErrTriggerExists: the target already has the trigger.
	ErrTriggerExists = errors.New("deliberate: trigger exists")
	// ErrTriggerLimit: the target has intent.MaxCustomPerTarget triggers.
	ErrTriggerLimit = errors.New("deliberate: too many triggers")
	// ErrNoTrigger: the target has no such trigger.
	ErrNoTrigger = errors.New("deliberate: no such trigger")
)

// TriggerError is a trigger write refused by what is stored: Err is
// ErrTriggerExists, ErrTriggerLimit or ErrNoTrigger; its message names
// the trigger.
type TriggerError struct {
	Err     error
	Trigger Trigger
}

// Error names the trigger and what is wrong with it, for people.
func (e *TriggerError) Error() string {
	t := e.Trigger
	switch e.Err {
	case ErrTriggerExists:
		return fmt.Sprintf("%q is already a %s trigger", t.Phrase, t.Target)
	case ErrTriggerLimit:
		return fmt.Sprintf("%s already has %d custom triggers (the limit)", t.Target, intent.MaxCustomPerTarget)
	}
	return fmt.Sprintf("no %s trigger %q", t.Target, t.Phrase)
}

// Unwrap returns Err, so errors.Is matches the sentinel.
func (e *TriggerError) Unwrap() error { return e.Err }

// CheckHistoryTurns refuses a re-scan depth outside
// 0–intent.MaxHistoryTurns other than -1 (the default).
func CheckHistoryTurns(n int) error {
	if n < -1 || n > intent.MaxHistoryTurns {
		return &InvalidError{Msg: fmt.Sprintf("history turns %d: use 0–%d, or -1 for the default", n, intent.MaxHistoryTurns)}
	}
	return nil
}

// CheckClassifierShift refuses a shift outside -MaxShift..MaxShift (or
// not a number).
func CheckClassifierShift(v float64) error {
	if math.IsNaN(v) || math.Abs(v) > MaxShift {
		return &InvalidError{Msg: fmt.Sprintf("classifier shift %v: use a number from -%.1f to %.1f (positive opens less)", v, MaxShift, MaxShift)}
	}
	return nil
}

// Refused reports whether err is the configuration refusing the input
// (an *InvalidError, or a *TriggerError: at odds with what is stored)
// rather than failing to read or write.
func Refused(err error) bool {
	var bad *InvalidError
	var te *TriggerError
	return errors.As(err, &bad) || errors.As(err, &te)
}

// Check validates c.
func (c Change) Check() error {
	if c.HistoryTurns != nil {
		if err := CheckHistoryTurns(*c.HistoryTurns); err != nil {
			return err
		}
	}
	if c.ClassifierShift != nil {
		if c.DeploymentShift {
			return &InvalidError{Msg: "give a classifier shift or ask for the deployment's, not both"}
		}
		return CheckClassifierShift(*c.ClassifierShift)
	}
	return nil
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return clock.Now().UTC()
	}
	return s.Now().UTC()
}

// Settings returns the organisation's settings; one that never saved any
// has the mode off, the default depth and the helpers kept.
func (s *Service) Settings(ctx context.Context, orgID string) (Settings, error) {
	st, err := s.Store.GetIntentSettings(ctx, orgID)
	if err != nil {
		return Settings{}, fmt.Errorf("read deliberate tool mode settings: %w", err)
	}
	set := Settings{OrgID: orgID, Enabled: st.Enabled, HistoryTurns: st.HistoryTurns, GateAlwaysOn: st.GateAlwaysOn}
	if st.ClassifierShift != nil {
		v := float64(*st.ClassifierShift) / 100
		set.ClassifierShift = &v
	}
	return set, nil
}

// Update validates c and applies it to the stored settings in one write,
// returning them as stored. Bad input is an *InvalidError, writing
// nothing.
func (s *Service) Update(ctx context.Context, orgID string, c Change) (Settings, error) {
	if err := c.Check(); err != nil {
		return Settings{}, err
	}
	set := Settings{OrgID: orgID, Enabled: c.Enabled}
	if c.HistoryTurns == nil || c.GateAlwaysOn == nil || (c.ClassifierShift == nil && !c.DeploymentShift) {
		stored, err := s.Settings(ctx, orgID)
		if err != nil {
			return Settings{}, err
		}
		set.HistoryTurns, set.GateAlwaysOn, set.ClassifierShift = stored.HistoryTurns, stored.GateAlwaysOn, stored.ClassifierShift
	}
	switch {
	case c.DeploymentShift:
		set.ClassifierShift = nil
	case c.ClassifierShift != nil:
		v := math.Round(*c.ClassifierShift*100) / 100
		set.ClassifierShift = &v
	}
	if c.HistoryTurns != nil {
		set.HistoryTurns = *c.HistoryTurns
	}
	if c.GateAlwaysOn != nil {
		set.GateAlwaysOn = *c.GateAlwaysOn
	}
	stored := store.IntentSettings{
		OrgID: orgID, Enabled: set.Enabled, HistoryTurns: set.HistoryTurns, GateAlwaysOn: set.GateAlwaysOn, UpdatedAt: s.now(),
	}
	if set.ClassifierShift != nil {
		h := int(math.Round(*set.ClassifierShift * 100))
		stored.ClassifierShift = &h
	}
	if err := s.Store.PutIntentSettings(ctx, stored); err != nil {
		return Settings{}, fmt.Errorf("save deliberate tool mode settings: %w", err)
	}
	return set, nil
}

// ParseUserMode validates a user's mode: off, follow or on (any case,
// spaces trimmed; "" is follow). Anything else is an *InvalidError.
func ParseUserMode(mode string) (string, error) {
	m, err := intent.ParseUserMode(mode)
	if err != nil {
		return "", &InvalidError{Msg: err.Error()}
	}
	return m, nil
}

// UserMode returns the user's mode; follow when none is stored.
func (s *Service) UserMode(ctx context.Context, orgID, userID string) (string, error) {
	m, err := s.Store.GetUserIntentMode(ctx, orgID, userID)
	if err != nil {
		return "", fmt.Errorf("read deliberate tool mode override: %w", err)
	}
	return m, nil
}

// SetUserMode validates and stores the user's mode (see ParseUserMode)
// and returns it as stored.
func (s *Service) SetUserMode(ctx context.Context, orgID, userID, mode string) (string, error) {
	m, err := ParseUserMode(mode)
	if err != nil {
		return "", err
	}
	if err := s.Store.SetUserIntentMode(ctx, orgID, userID, m); err != nil {
		return "", fmt.Errorf("save deliberate tool mode override: %w", err)
	}
	return m, nil
}
