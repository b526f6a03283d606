package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/quiverhq/quiver/store"
)

// StoredAgents is an AgentSource over the organisations' stored agent
// definitions: each call reads the definition from st and parses it with
// parse (the agent file format, which the engine does not know). A
// missing agent is st's error (store.ErrNotFound); parse's *InputError is
// returned as is, its message being for the caller; any other parse error
// is wrapped naming the agent ("stored agent NAME: ...").
//
// parse must be a pure function of the definition: the agents it returns
// are kept per definition (its bytes, so an edited definition is parsed
// anew), at most DefaultParsedAgents of them, and each call gets its own
// copy of the allowlist and switches. Failures are not kept.
func StoredAgents(st store.Agents, parse func(definition []byte) (Agent, error)) AgentSource {
	return storedAgents{st: st, parse: parse, parsed: &parsedAgents{m: map[string]Agent{}}}
}

// DefaultParsedAgents is how many parsed definitions StoredAgents keeps.
const DefaultParsedAgents = 256

type storedAgents struct {
	st     store.Agents
	parse  func([]byte) (Agent, error)
	parsed *parsedAgents
}

// parsedAgents are parsed definitions by their bytes; emptied when full.
type parsedAgents struct {
	mu sync.Mutex
	m  map[string]Agent
	// parses counts the definitions parsed (the misses), for tests.
	parses int
}

// Agent implements AgentSource.
func (s storedAgents) Agent(ctx context.Context, orgID, name string) (Agent, error) {
	stored, err := s.st.GetAgent(ctx, orgID, name)
	if err != nil {
		return Agent{}, err
	}
	ag, err := s.parsed.get(stored.Definition, s.parse)
	if err == nil {
		return ag, nil
	}
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		return Agent{}, err
	}
	return Agent{}, fmt.Errorf("stored agent %s: %w", name, err)
}

// get is parse(def), from the kept agents when def was parsed before.
func (p *parsedAgents) get(def []byte, parse func([]byte) (Agent, error)) (Agent, error) {
	p.mu.Lock()
	ag, ok := p.m[string(def)]
	p.mu.Unlock()
	if !ok {
		var err error
		if ag, err = parse(def); err != nil {
			return Agent{}, err
		}
		p.mu.Lock()
		if len(p.m) >= DefaultParsedAgents {
			clear(p.m)
		}
		p.m[string(def)] = ag
		p.parses++
		p.mu.Unlock()
	}
	ag.Agent.Allow = slices.Clone(ag.Agent.Allow)
	ag.Agent.Switches = maps.Clone(ag.Agent.Switches)
	return ag, nil
}
