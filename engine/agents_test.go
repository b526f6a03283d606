package engine_test

import (
	"context"
	"errors"
	"maps"
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

// TestStoredAgentsParseOncePerDefinition: a definition is parsed once
// however many turns read it; an edited one is parsed anew; a failure is
// parsed again next time; each caller gets its own allowlist.
func TestStoredAgentsParseOncePerDefinition(t *testing.T) {
	ctx := context.Background()
	_, st := newEngine(t)
	put := func(def string) {
		t.Helper()
		if err := st.PutAgent(ctx, store.StoredAgent{OrgID: "acme", Name: "a", Definition: []byte(def), CreatedAt: start, UpdatedAt: start}); err != nil {
			t.Fatal(err)
		}
	}
	parses := map[string]int{}
	agents := engine.StoredAgents(st, func(def []byte) (engine.Agent, error) {
		parses[string(def)]++
		if string(def) == "broken" {
			return engine.Agent{}, errors.New("cannot decode")
		}
		return engine.Agent{Agent: turn.Agent{Name: string(def), Allow: []string{"web"}}}, nil
	})
	read := func() (engine.Agent, error) { return agents.Agent(ctx, "acme", "a") }
	put("v1")
	for range 3 {
		ag, err := read()
		if err != nil || ag.Agent.Name != "v1" {
			t.Fatalf("v1: %+v, %v", ag, err)
		}
		ag.Agent.Allow[0] = "changed by a caller"
	}
	put("v2")
	if ag, err := read(); err != nil || ag.Agent.Name != "v2" || ag.Agent.Allow[0] != "web" {
		t.Errorf("after the edit: %+v, %v; want v2 with its own allowlist", ag, err)
	}
	put("broken")
	for range 2 {
		if _, err := read(); err == nil {
			t.Error("a broken definition parsed")
		}
	}
	if want := map[string]int{"v1": 1, "v2": 1, "broken": 2}; !maps.Equal(parses, want) {
		t.Errorf("parses %v, want %v", parses, want)
	}
	put("v1")
	if ag, _ := read(); ag.Agent.Allow[0] != "web" {
		t.Errorf("kept agent's allowlist %v: a caller's change reached it", ag.Agent.Allow)
	}
}
