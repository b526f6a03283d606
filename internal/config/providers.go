package config

import "github.com/quiverhq/quiver/llm/providers"

// ProviderConfig returns the configured model providers, text-tool
// models and the network mode (which an organisation's own connections
// are reached in) as providers.New takes them (its Providers never nil);
// the caller adds what the process shares: the environment, the HTTP
// clients and the logger. The conversion lives here, not in
// llm/providers, so that the public providers package does not depend on
// this internal configuration format.
func (c Config) ProviderConfig() providers.Config {
	ps := make(map[string]providers.Provider, len(c.Providers))
	for name, p := range c.Providers {
		ps[name] = providers.Provider(p)
	}
	return providers.Config{Providers: ps, TextTools: c.TextTools, Network: c.Network.Mode}
}
