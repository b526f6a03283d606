package app

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/turn"
)

// TestWebToolsFollowExcludeProviders: web.exclude_providers, from the
// deployment's config or an organisation's settings, keeps a provider off
// every web tool (web_search, fetch_url, research_web), each with a reason
// naming the provider; other providers keep them all.
func TestWebToolsFollowExcludeProviders(t *testing.T) {
	o := &orgSettings{}
	configs := []struct {
		name string
		cfg  config.Config
	}{
		{"deployment config", config.Config{Web: config.Web{ExcludeProviders: []string{"novelai"}}}},
		{"organisation settings", o.apply(settingsDoc{Web: webDoc{ExcludeProviders: &[]string{"novelai"}}}, nil)},
	}
	web := []string{"web_search", "fetch_url", "research_web"}
	const reason = "provider novelai is excluded from the web tools (web.exclude_providers, in config or Settings)"
	want := []registry.Exclusion{
		{Name: "web_search", Reason: "provider novelai is excluded from the web tools (web.exclude_providers, in config or Settings)"},
		{Name: "fetch_url", Reason: reason},
		{Name: "research_web", Reason: reason},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			cat := builtin.NewCatalog(builtin.CatalogDeps{Config: c.cfg})
			facts := func(provider string) turn.Facts {
				return turn.Facts{
					Agent: turn.Agent{Allow: []string{"web_search", "url_fetch", "research"}},
					Model: turn.Model{Provider: provider, Name: "m", Caps: turn.Capabilities{Tools: true}},
				}
			}
			excluded := cat.Select(facts("novelai"))
			var got []registry.Exclusion
			for _, e := range excluded.Excluded() {
				if slices.Contains(web, e.Name) {
					got = append(got, e)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("novelai's web tools left out (-want +got):\n%s", diff)
			}
			for _, name := range web {
				if _, ok := excluded.Lookup(name); ok {
					t.Errorf("novelai's turn declares %s", name)
				}
				if _, ok := cat.Select(facts("openai")).Lookup(name); !ok {
					t.Errorf("openai's turn lacks %s", name)
				}
			}
		})
	}
}
