package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Ref is m's "provider:model" reference.
func Ref(m turn.Model) string { return m.Provider + ":" + m.Name }

// Offers returns the model of the agent's that ref names, with the
// agent's capabilities: its own model or one of Models. false when the
// agent offers no such model.
func (a Agent) Offers(ref string) (turn.Model, bool) {
	if Ref(a.Model) == ref {
		return a.Model, true
	}
	for _, m := range a.Models {
		if Ref(m) == ref {
			return m, true
		}
	}
	return turn.Model{}, false
}

// ModelChoice is one model a conversation with an agent may run on.
type ModelChoice struct {
	// Ref is the "provider:model" reference.
	Ref string
	// Default marks the agent's own model, which a conversation that
	// chose none runs on.
	Default bool
	// Connected reports that the organisation's settings open it (its
	// provider has a key or a base URL); a turn on a model that is not
	// connected is refused.
	Connected bool
	// Help says, when not connected, why and how to connect it.
	Help string
}

// ModelChoices lists the models a conversation with the organisation's
// stored agent may run on: the agent's own model first, then its Models
// in order, each with whether the organisation's settings open it (no
// request is sent to a provider; with no provider configured at all, the
// local Ollama server is asked for its models). A missing agent is an
// *InputError.
func (e *Engine) ModelChoices(ctx context.Context, orgID, agentName string) ([]ModelChoice, error) {
	ag, rt, err := e.agentRuntime(ctx, orgID, agentName)
	if err != nil {
		return nil, err
	}
	out := make([]ModelChoice, 0, 1+len(ag.Models))
	for i, m := range append([]turn.Model{ag.Model}, ag.Models...) {
		c := ModelChoice{Ref: Ref(m), Default: i == 0}
		if err := open(ctx, rt, m); err != nil {
			c.Help = err.Error()
		} else {
			c.Connected = true
		}
		out = append(out, c)
	}
	return out, nil
}

// CheckModel returns nil when a conversation with the organisation's
// stored agent may run on ref: the agent offers it and the organisation's
// settings open it. Otherwise an *InputError says which of the two is
// missing.
func (e *Engine) CheckModel(ctx context.Context, orgID, agentName, ref string) error {
	ag, rt, err := e.agentRuntime(ctx, orgID, agentName)
	if err != nil {
		return err
	}
	m, ok := ag.Offers(ref)
	if !ok {
		return inputf("model %q is not one the agent %q offers (GET its models for the list)", ref, agentName)
	}
	if err := open(ctx, rt, m); err != nil {
		return &InputError{Msg: err.Error()}
	}
	return nil
}

// agentRuntime reads the stored agent and the organisation's runtime.
func (e *Engine) agentRuntime(ctx context.Context, orgID, agentName string) (Agent, Runtime, error) {
	if e.cfg.Agents == nil {
		return Agent{}, Runtime{}, errors.New("engine: no stored agents to list the models of")
	}
	ag, err := e.cfg.Agents.Agent(ctx, orgID, agentName)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Agent{}, Runtime{}, inputf("no agent named %q", agentName)
	case err != nil:
		return Agent{}, Runtime{}, fmt.Errorf("stored agent %s: %w", agentName, err)
	}
	rt, err := e.cfg.Runtime.Runtime(ctx, orgID)
	return ag, rt, err
}

// open opens m under rt, as a turn would, and says in one line why it
// cannot be.
func open(ctx context.Context, rt Runtime, m turn.Model) error {
	if rt.Models == nil {
		return errors.New(NoModel(nil))
	}
	if _, err := rt.Models.Open(ctx, m); err != nil {
		return errors.New(NoModel(err))
	}
	return nil
}

// NoModel is the one line that says no model is connected, with why
// (err, from a ModelOpener; nil when there is none): "no model is
// connected: ...", the reason's own "no model connected" said once.
func NoModel(err error) string {
	if err == nil {
		return "no model is connected"
	}
	msg, _ := strings.CutPrefix(err.Error(), "no model connected: ")
	return "no model is connected: " + msg
}
