package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors of Intents.
var (
	// ErrTriggerExists reports a custom trigger already stored for that
	// target.
	ErrTriggerExists = errors.New("trigger already exists")
	// ErrTriggerLimit reports a target at its custom trigger limit.
	ErrTriggerLimit = errors.New("trigger limit reached")
)

// IntentSettings are a community's Deliberate Tool Mode settings.
type IntentSettings struct {
	OrgID string
	// Enabled is the community toggle.
	Enabled bool
	// HistoryTurns is how many recent user messages are re-scanned
	// (0–10); -1 means not set (the default applies).
	HistoryTurns int
	// GateAlwaysOn is the opt-in to the mode gating the always-on helpers
	// too; false (the default) keeps them declared on every turn.
	GateAlwaysOn bool
	// ClassifierShift moves the learned stage's thresholds for this
	// community, in hundredths (MinClassifierShift..MaxClassifierShift;
	// positive opens less); nil takes the deployment's
	// (intent.classifier_shift).
	ClassifierShift *int
	UpdatedAt       time.Time
}

// Bounds of IntentSettings.ClassifierShift, in hundredths: ±0.5, what
// intent.MaxShift allows.
const (
	MinClassifierShift = -50
	MaxClassifierShift = 50
)

// IntentTrigger is a community's custom trigger, stored normalised.
type IntentTrigger struct {
	OrgID     string
	Target    string
	Phrase    string
	CreatedAt time.Time
}

// Intents stores Deliberate Tool Mode state: community settings, custom
// triggers, users' overrides, and the targets each conversation opened.
type Intents interface {
	// GetIntentSettings returns the community's settings; a community that
	// never saved any gets {OrgID, Enabled: false, HistoryTurns: -1,
	// GateAlwaysOn: false} and no error.
	GetIntentSettings(ctx context.Context, orgID string) (IntentSettings, error)
	// PutIntentSettings inserts or replaces the community's settings;
	// HistoryTurns outside -1..10 or a ClassifierShift outside its bounds
	// is refused, writing nothing.
	PutIntentSettings(ctx context.Context, s IntentSettings) error
	// AddIntentTrigger stores a trigger. It fails, writing nothing, with
	// ErrTriggerExists for the same (target, phrase) and otherwise with
	// ErrTriggerLimit when the target already has limit triggers (limit
	// <= 0: no limit), both checked in the write's transaction. An empty
	// target or phrase is refused.
	AddIntentTrigger(ctx context.Context, t IntentTrigger, limit int) error
	// RemoveIntentTrigger deletes a trigger or returns ErrNotFound.
	RemoveIntentTrigger(ctx context.Context, orgID, target, phrase string) error
	// ListIntentTriggers returns the community's triggers ordered by
	// target, then phrase, in byte order.
	ListIntentTriggers(ctx context.Context, orgID string) ([]IntentTrigger, error)
	// GetUserIntentMode returns a user's override ("off", "follow", "on");
	// "follow" when none is stored.
	GetUserIntentMode(ctx context.Context, orgID, userID string) (string, error)
	// SetUserIntentMode stores a user's override: "off", "follow" or
	// "on"; anything else (including "") is refused, writing nothing.
	SetUserIntentMode(ctx context.Context, orgID, userID, mode string) error
	// OpenIntentTargets appends to the conversation's open targets those
	// of targets it does not hold yet, in the given order, atomically, and
	// returns the full list in the order the targets first opened. With
	// targets empty it only reads; a target repeated in one call opens
	// once. A conversation never seen starts empty.
	OpenIntentTargets(ctx context.Context, orgID, conversationID string, targets []string) ([]string, error)
}
