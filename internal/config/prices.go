package config

import "github.com/quiverhq/quiver/agent"

// AgentPrices returns the configured prices as the loop costs turns with
// them, by "provider:model"; never nil.
func (c Config) AgentPrices() map[string]agent.Price {
	out := make(map[string]agent.Price, len(c.Prices))
	for ref, p := range c.Prices {
		out[ref] = agent.Price(p)
	}
	return out
}
