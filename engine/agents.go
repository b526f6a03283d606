package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// StoredAgents is an AgentSource over the organisations' stored agent
// definitions: each call reads the definition from st and parses it with
// parse (the agent file format, which the engine does not know). A
// missing agent is st's error (store.ErrNotFound); parse's *InputError is
// returned as is, its message being for the caller; any other parse error
// is wrapped naming the agent ("stored agent NAME: ...").
func StoredAgents(st store.Agents, parse func(definition []byte) (Agent, error)) AgentSource {
	return storedAgents{st: st, parse: parse}
}

type storedAgents struct {
	st    store.Agents
	parse func([]byte) (Agent, error)
}

// Agent implements AgentSource.
func (s storedAgents) Agent(ctx context.Context, orgID, name string) (Agent, error) {
	stored, err := s.st.GetAgent(ctx, orgID, name)
	if err != nil {
		return Agent{}, err
	}
	ag, err := s.parse(stored.Definition)
	if err == nil {
		return ag, nil
	}
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		return Agent{}, err
	}
	return Agent{}, fmt.Errorf("stored agent %s: %w", name, err)
}
