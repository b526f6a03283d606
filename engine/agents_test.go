package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// TestStoredAgents: a stored definition reaches parse and its agent the
// caller; a missing agent is the store's not-found; parse's *InputError
// is returned as is, any other parse error names the agent.
func TestStoredAgents(t *testing.T) {
	ctx := context.Background()
	_, st := newEngine(t)
	for name, def := range map[string]string{"good": "good def", "input": "bad model", "broken": "not yaml"} {
		if err := st.PutAgent(ctx, store.StoredAgent{OrgID: "acme", Name: name, Definition: []byte(def), CreatedAt: start, UpdatedAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	parse := func(def []byte) (engine.Agent, error) {
		switch string(def) {
		case "good def":
			return engine.Agent{Agent: turn.Agent{Name: "good"}, Model: turn.Model{Provider: "openai", Name: "m"}}, nil
		case "bad model":
			return engine.Agent{}, &engine.InputError{Msg: "model \"x\": write it as provider:model"}
		}
		return engine.Agent{}, errors.New("line 1: cannot decode")
	}
	agents := engine.StoredAgents(st, parse)

	got, err := agents.Agent(ctx, "acme", "good")
	if err != nil || got.Agent.Name != "good" || got.Model != (turn.Model{Provider: "openai", Name: "m"}) {
		t.Errorf("good: %+v, %v; want the parsed agent", got, err)
	}
	if _, err := agents.Agent(ctx, "other", "good"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organisation's agent: %v, want store.ErrNotFound", err)
	}
	var ie *engine.InputError
	if _, err := agents.Agent(ctx, "acme", "input"); !errors.As(err, &ie) || err.Error() != `model "x": write it as provider:model` {
		t.Errorf("input error: %v, want the *InputError as is", err)
	}
	_, err = agents.Agent(ctx, "acme", "broken")
	if err == nil || errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "stored agent broken: line 1") {
		t.Errorf("broken definition: %v, want a plain error naming the agent", err)
	}
}
