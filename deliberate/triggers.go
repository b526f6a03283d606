package deliberate

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/store"
)

// Trigger is a custom trigger: a phrase that opens a target (a family).
// Its JSON form is {"family", "phrase"}, as `quiver triggers list --json`
// prints it.
type Trigger struct {
	Target string `json:"family"`
	Phrase string `json:"phrase"`
}

// NewTrigger validates a trigger and returns it with the phrase
// normalised as the detector reads messages (its stored form): the
// target must be one of intent.Targets, the phrase literal (no regular
// expression syntax) and at most intent.MaxCustomChars characters once
// normalised; "^" opens the target on every turn. Anything else is an
// *InvalidError.
func NewTrigger(target, phrase string) (Trigger, error) {
	p, err := intent.CheckCustom(target, phrase)
	if err != nil {
		return Trigger{}, &InvalidError{Msg: err.Error()}
	}
	return Trigger{Target: target, Phrase: p}, nil
}

// AddTrigger validates and stores a trigger, returning it normalised. Bad
// input is an *InvalidError; a trigger the target has is ErrTriggerExists
// and a target at intent.MaxCustomPerTarget triggers ErrTriggerLimit (both
// *TriggerError, checked in the write's transaction); each writes
// nothing.
func (s *Service) AddTrigger(ctx context.Context, orgID, target, phrase string) (Trigger, error) {
	t, err := NewTrigger(target, phrase)
	if err != nil {
		return Trigger{}, err
	}
	err = s.Store.AddIntentTrigger(ctx, store.IntentTrigger{OrgID: orgID, Target: t.Target, Phrase: t.Phrase, CreatedAt: s.now()}, intent.MaxCustomPerTarget)
	switch {
	case errors.Is(err, store.ErrTriggerExists):
		return Trigger{}, &TriggerError{Err: ErrTriggerExists, Trigger: t}
	case errors.Is(err, store.ErrTriggerLimit):
		return Trigger{}, &TriggerError{Err: ErrTriggerLimit, Trigger: t}
	case err != nil:
		return Trigger{}, fmt.Errorf("add trigger: %w", err)
	}
	return t, nil
}

// RemoveTrigger deletes a trigger, the phrase normalised first, and
// returns it normalised. Bad input is an *InvalidError; a trigger not
// stored is ErrNoTrigger (a *TriggerError).
func (s *Service) RemoveTrigger(ctx context.Context, orgID, target, phrase string) (Trigger, error) {
	t, err := NewTrigger(target, phrase)
	if err != nil {
		return Trigger{}, err
	}
	err = s.Store.RemoveIntentTrigger(ctx, orgID, t.Target, t.Phrase)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Trigger{}, &TriggerError{Err: ErrNoTrigger, Trigger: t}
	case err != nil:
		return Trigger{}, fmt.Errorf("remove trigger: %w", err)
	}
	return t, nil
}

// Triggers lists the organisation's custom triggers by target, then
// phrase (byte order); never nil.
func (s *Service) Triggers(ctx context.Context, orgID string) ([]Trigger, error) {
	ts, err := s.Store.ListIntentTriggers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("read custom triggers: %w", err)
	}
	out := make([]Trigger, 0, len(ts))
	for _, t := range ts {
		out = append(out, Trigger{Target: t.Target, Phrase: t.Phrase})
	}
	return out, nil
}

// Custom compiles the organisation's custom triggers for the detector.
func (s *Service) Custom(ctx context.Context, orgID string) (*intent.Custom, error) {
	ts, err := s.Triggers(ctx, orgID)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, t := range ts {
		m[t.Target] = append(m[t.Target], t.Phrase)
	}
	c, err := intent.CompileCustom(m)
	if err != nil {
		return nil, fmt.Errorf("compile custom triggers: %w", err)
	}
	return c, nil
}
