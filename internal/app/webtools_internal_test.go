package app

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/turn"
)

// TestWebToolsFollowExcludeProviders: web.exclude_providers, from the
// deployment's config or an organisation's settings, keeps a provider off
// every web tool (web_search, fetch_url, research_web), each with a reason
// naming the provider; other providers keep them all.
func TestWebToolsFollowExcludeProviders(t *testing.T) {
	configs := []struct {
		name string
		cfg  config.Config
	}{
		{"deployment config", config.Config{Web: config.Web{ExcludeProviders: []string{"novelai"}}}},
		{"organisation settings", savedConfig(t, settings.Web{ExcludeProviders: []string{"novelai"}})},
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

// savedConfig is the configuration in force for an organisation of a
// default deployment that saved web in its settings.
func savedConfig(t *testing.T, web settings.Web) config.Config {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateOrg(ctx, store.Org{ID: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	o := settings.New(settings.Config{Store: st, Build: func(cfg config.Config, keys map[string]string) *registry.Catalog {
		return builtin.NewCatalog(builtin.CatalogDeps{Config: cfg, Keys: keys})
	}})
	if _, err := o.Update(ctx, "acme", settings.Update{NetworkMode: "public", Web: web}); err != nil {
		t.Fatal(err)
	}
	rt, err := o.Runtime(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return rt.Config()
}
