package prompt

import (
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
)

// PreviewEnv is the template environment of a turn described by hand, as
// `quiver prompt render` renders against: caps are the capabilities that
// are on (any other is off), tools the declared function names, families
// the declared families. Every family of c's tools is known, declared when
// one of its tools is in tools or it is in families, and c's tools serve
// their macros. Names are used as given. It reads c only.
func PreviewEnv(c *registry.Catalog, caps, tools, families []string) tmpl.Env {
	env := tmpl.Env{Capabilities: map[string]bool{}, Tools: map[string]bool{}, Families: map[string]bool{}, Macros: map[string]string{}}
	for _, name := range caps {
		env.Capabilities[name] = true
	}
	for _, name := range tools {
		env.Tools[name] = true
	}
	for _, t := range c.Tools() {
		env.Families[t.Family()] = env.Families[t.Family()] || env.Tools[t.Name()]
		for _, key := range t.Spec().Macros {
			env.Macros[key] = t.Name()
		}
	}
	for _, f := range families {
		env.Families[f] = true
	}
	return env
}
