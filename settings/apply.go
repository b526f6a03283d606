package settings

import (
	"maps"
	"slices"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
)

// apply returns the deployment configuration with a document and keys
// applied. The deployment's configuration is a ceiling: the network mode
// is never wider than its mode, web search and DuckDuckGo stay off where
// it turned them off, its IAsk key goes only to its own IAsk URL, and the
// organisation's own connections are reached only through the guarded
// client, in the organisation's mode.
func (s *Service) apply(doc document, keys map[string]string) config.Config {
	cfg := s.base
	if slices.Contains(s.modes(), doc.NetworkMode) {
		cfg.Network.Mode = doc.NetworkMode
	}
	web := s.effectiveWeb(doc.Web)
	w := &cfg.Web
	w.Disabled, w.SearXNGURL, w.IAskURL = web.Disabled, web.SearXNGURL, web.IAskURL
	w.DuckDuckGoDisabled, w.ExcludeProviders = web.DuckDuckGoDisabled, web.ExcludeProviders
	if w.IAskURL != s.base.Web.IAskURL {
		w.IAskKeyEnv = "" // the deployment's key is for its own endpoint only
	}
	cfg.Providers = maps.Clone(s.base.Providers)
	for _, k := range keySpecs {
		if v := keys[k.name]; v != "" && k.provider != "" {
			if cfg.Providers == nil {
				cfg.Providers = map[string]config.Provider{}
			}
			p := cfg.Providers[k.provider]
			p.APIKey = v
			cfg.Providers[k.provider] = p
		}
	}
	applyConnections(&cfg, doc.Connections, keys)
	return cfg
}

// effectiveWeb is the deployment's web settings with the document's
// overrides, under the deployment's ceiling.
func (s *Service) effectiveWeb(d webDoc) Web {
	b := s.base.Web
	return Web{
		Disabled:           b.Disabled || or(d.Disabled, false),
		SearXNGURL:         or(d.SearXNGURL, b.SearXNGURL),
		IAskURL:            or(d.IAskURL, b.IAskURL),
		DuckDuckGoDisabled: b.DuckDuckGoDisabled || or(d.DuckDuckGoDisabled, false),
		ExcludeProviders:   slices.Clone(or(d.ExcludeProviders, b.ExcludeProviders)),
	}
}

// modes are the network modes the deployment lets an organisation pick:
// a public deployment allows only public; a self-hosted one both.
func (s *Service) modes() []string {
	if netguard.ParseMode(s.base.Network.Mode) == netguard.SelfHosted {
		return []string{"public", "self-hosted"}
	}
	return []string{"public"}
}

// baseMode is the deployment's network mode.
func (s *Service) baseMode() string { return string(netguard.ParseMode(s.base.Network.Mode)) }

// effectiveMode is the mode a document's choice amounts to.
func (s *Service) effectiveMode(chosen string) string {
	if slices.Contains(s.modes(), chosen) {
		return chosen
	}
	return s.baseMode()
}
