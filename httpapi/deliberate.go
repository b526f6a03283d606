package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/intent"
)

// deliberateRoutes registers Deliberate Tool Mode's settings: the
// organisation's toggle, re-scan depth and custom triggers (admins), and
// each user's own override.
func (s *server) deliberateRoutes() {
	tags := []string{"deliberate tool mode"}
	register(s, huma.Operation{
		OperationID: "get-deliberate", Method: http.MethodGet, Path: "/api/deliberate", Tags: tags,
		Summary:     "The organisation's Deliberate Tool Mode settings and custom triggers",
		Description: "See docs/intent.md. history_turns -1 means the default.",
	}, adminOnly, s.getDeliberate)
	register(s, huma.Operation{
		OperationID: "put-deliberate", Method: http.MethodPut, Path: "/api/deliberate", Tags: tags,
		Summary: "Turn Deliberate Tool Mode on or off for the organisation",
		Description: "history_turns is 0–10 recent user messages re-scanned, or -1 for the default. " +
			"gate_always_on true gates the always-on helpers too; left out, it stays as stored. " +
			"classifier_shift (-0.5 to 0.5, positive opens fewer families) moves the learned stage's thresholds " +
			"for the organisation; classifier_shift_default true takes the deployment's again; both left out, " +
			"it stays as stored. One write.",
	}, adminOnly, s.putDeliberate)
	register(s, huma.Operation{
		OperationID: "add-trigger", Method: http.MethodPost, Path: "/api/deliberate/triggers", Tags: tags,
		Summary: "Add a custom trigger phrase to a target",
		Description: "The phrase is normalised as the detector reads messages (and returned so). 409 trigger_exists " +
			"for a phrase the target has, 409 trigger_limit at the per-target limit; the messages name the trigger " +
			"as quiver triggers does.",
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusConflict},
	}, adminOnly, s.addTrigger)
	register(s, huma.Operation{
		OperationID: "remove-trigger", Method: http.MethodDelete, Path: "/api/deliberate/triggers", Tags: tags,
		Summary:       "Remove a custom trigger",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound},
	}, adminOnly, s.removeTrigger)
	register(s, huma.Operation{
		OperationID: "get-my-deliberate", Method: http.MethodGet, Path: "/api/me/deliberate", Tags: tags,
		Summary: "Your own Deliberate Tool Mode override: off, follow (the organisation's) or on",
	}, signedIn, s.getMyDeliberate)
	register(s, huma.Operation{
		OperationID: "put-my-deliberate", Method: http.MethodPut, Path: "/api/me/deliberate", Tags: tags,
		Summary: "Set your own Deliberate Tool Mode override",
	}, signedIn, s.putMyDeliberate)
}

// Deliberate is an organisation's Deliberate Tool Mode settings.
type Deliberate struct {
	Enabled bool `json:"enabled"`
	// HistoryTurns is how many recent user messages are re-scanned; -1
	// means the default.
	HistoryTurns        int `json:"history_turns" minimum:"-1" maximum:"10"`
	DefaultHistoryTurns int `json:"default_history_turns" readOnly:"true"`
	// GateAlwaysOn is the opt-in to the mode gating the always-on helpers
	// too; false keeps them declared on every turn.
	GateAlwaysOn bool `json:"gate_always_on" doc:"The mode gates the always-on helpers (clarifying question, suggestions, calculator, read_tool_result, read_transcript) too; false keeps them on every turn."`
	// ClassifierShift is the organisation's own shift of the classifier's
	// thresholds; nil takes the deployment's.
	ClassifierShift *float64  `json:"classifier_shift" nullable:"true" doc:"The organisation's shift of the classifier's thresholds (-0.5 to 0.5, positive opens fewer families); null takes the deployment's (intent.classifier_shift)."`
	Targets         []string  `json:"targets" readOnly:"true" doc:"The targets a trigger may open."`
	MaxTriggers     int       `json:"max_triggers_per_target" readOnly:"true"`
	Triggers        []Trigger `json:"triggers" readOnly:"true"`
}

// Trigger is a custom trigger phrase of a target.
type Trigger struct {
	Target string `json:"target" minLength:"1" maxLength:"64"`
	Phrase string `json:"phrase" minLength:"1" maxLength:"200"`
}

type deliberateOutput struct{ Body Deliberate }

type putDeliberateInput struct {
	Body struct {
		Enabled      bool `json:"enabled"`
		HistoryTurns int  `json:"history_turns" minimum:"-1" maximum:"10"`
		// GateAlwaysOn nil keeps the stored choice, so a client that
		// predates it does not reset it.
		GateAlwaysOn *bool `json:"gate_always_on,omitempty" doc:"Gate the always-on helpers too; left out, unchanged."`
		// ClassifierShift and ClassifierShiftDefault both left out keep
		// the stored shift.
		ClassifierShift        *float64 `json:"classifier_shift,omitempty" minimum:"-0.5" maximum:"0.5" doc:"The organisation's classifier shift; left out, unchanged."`
		ClassifierShiftDefault bool     `json:"classifier_shift_default,omitempty" doc:"true takes the deployment's classifier shift again (with no classifier_shift)."`
	}
}

// deliberateView is what GET /api/deliberate answers for the
// organisation.
func (s *server) deliberateView(ctx context.Context, orgID string) (*deliberateOutput, error) {
	st, err := s.dtm.Settings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	ts, err := s.dtm.Triggers(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := &deliberateOutput{Body: Deliberate{
		Enabled: st.Enabled, HistoryTurns: st.HistoryTurns, DefaultHistoryTurns: intent.DefaultHistoryTurns,
		GateAlwaysOn: st.GateAlwaysOn, ClassifierShift: st.ClassifierShift,
		Targets: slices.Clone(intent.Targets), MaxTriggers: intent.MaxCustomPerTarget, Triggers: []Trigger{},
	}}
	for _, t := range ts {
		out.Body.Triggers = append(out.Body.Triggers, Trigger{Target: t.Target, Phrase: t.Phrase})
	}
	return out, nil
}

func (s *server) getDeliberate(ctx context.Context, _ *struct{}) (*deliberateOutput, error) {
	return s.deliberateView(ctx, authFrom(ctx).OrgID)
}

func (s *server) putDeliberate(ctx context.Context, in *putDeliberateInput) (*deliberateOutput, error) {
	a := authFrom(ctx)
	history := in.Body.HistoryTurns
	c := deliberate.Change{Enabled: in.Body.Enabled, HistoryTurns: &history, GateAlwaysOn: in.Body.GateAlwaysOn,
		ClassifierShift: in.Body.ClassifierShift, DeploymentShift: in.Body.ClassifierShiftDefault}
	if _, err := s.dtm.Update(ctx, a.OrgID, c); err != nil {
		return nil, deliberateError(err)
	}
	return s.deliberateView(ctx, a.OrgID)
}

// deliberateError maps the configuration's errors to statuses, with their
// messages: bad input 400, trigger_exists and trigger_limit 409, no such
// trigger 404; anything else passes unchanged.
func deliberateError(err error) error {
	var bad *deliberate.InvalidError
	var te *deliberate.TriggerError
	switch {
	case errors.As(err, &bad):
		return badRequest(bad.Msg)
	case errors.As(err, &te) && errors.Is(te, deliberate.ErrTriggerExists):
		return apiErr(http.StatusConflict, "trigger_exists", te.Error())
	case te != nil && errors.Is(te, deliberate.ErrTriggerLimit):
		return apiErr(http.StatusConflict, "trigger_limit", te.Error())
	case te != nil && errors.Is(te, deliberate.ErrNoTrigger):
		return notFound(te.Error())
	}
	return err
}

type triggerInput struct{ Body Trigger }

type triggerOutput struct{ Body Trigger }

func (s *server) addTrigger(ctx context.Context, in *triggerInput) (*triggerOutput, error) {
	t, err := s.dtm.AddTrigger(ctx, authFrom(ctx).OrgID, in.Body.Target, in.Body.Phrase)
	if err != nil {
		return nil, deliberateError(err)
	}
	return &triggerOutput{Body: Trigger{Target: t.Target, Phrase: t.Phrase}}, nil
}

type removeTriggerInput struct {
	Target string `query:"target" required:"true" maxLength:"64"`
	Phrase string `query:"phrase" required:"true" maxLength:"200"`
}

func (s *server) removeTrigger(ctx context.Context, in *removeTriggerInput) (*struct{}, error) {
	if _, err := s.dtm.RemoveTrigger(ctx, authFrom(ctx).OrgID, in.Target, in.Phrase); err != nil {
		return nil, deliberateError(err)
	}
	return nil, nil
}

type myDeliberateOutput struct {
	Body struct {
		Mode string `json:"mode" enum:"off,follow,on"`
	}
}

type putMyDeliberateInput struct {
	Body struct {
		Mode string `json:"mode" enum:"off,follow,on"`
	}
}

func (s *server) getMyDeliberate(ctx context.Context, _ *struct{}) (*myDeliberateOutput, error) {
	a := authFrom(ctx)
	mode, err := s.dtm.UserMode(ctx, a.OrgID, a.UserID)
	if err != nil {
		return nil, err
	}
	out := &myDeliberateOutput{}
	out.Body.Mode = mode
	return out, nil
}

func (s *server) putMyDeliberate(ctx context.Context, in *putMyDeliberateInput) (*myDeliberateOutput, error) {
	a := authFrom(ctx)
	mode, err := s.dtm.SetUserMode(ctx, a.OrgID, a.UserID, in.Body.Mode)
	if err != nil {
		return nil, deliberateError(err)
	}
	out := &myDeliberateOutput{}
	out.Body.Mode = mode
	return out, nil
}
