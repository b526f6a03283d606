package app

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestSettingsSayWhatSwitchesDo: the settings view says, for every switch
// it names, what it gates, and marks those with no tool behind them.
func TestSettingsSayWhatSwitchesDo(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	build := func(cfg config.Config, keys map[string]string) *registry.Catalog {
		return builtin.NewCatalog(builtin.CatalogDeps{Config: cfg, Keys: keys})
	}
	o := settings.New(settings.Config{Store: st, Build: build})
	got, err := o.Show(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]registry.Switch{}
	for _, s := range got.SwitchInfo {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	if d := cmp.Diff(got.SwitchNames, names); d != "" {
		t.Errorf("switch_info does not follow switch_names (-names +info):\n%s", d)
	}
	want := map[string]registry.Switch{
		"web_search": {Name: "web_search", Family: "web_search", Tools: []string{"web_search", "research_web"},
			Effect: "off leaves out web_search, research_web"},
		"image_generation": {Name: "image_generation", Family: "image_generation", Tools: []string{}, NoTool: true,
			Effect: "no tool yet: would gate the image_generation family; setting it changes nothing"},
		"emoji_usage": {Name: "emoji_usage", Tools: []string{}, Effect: "prompt conditions only ({{if capability:emoji_usage}})"},
	}
	for name, w := range want {
		if d := cmp.Diff(w, byName[name]); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}
