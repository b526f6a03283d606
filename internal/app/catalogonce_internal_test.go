package app

import (
	"context"
	"testing"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

// TestCatalogBuiltOncePerProcess: organisations with their own settings
// share the process's built-in tools (the very same values), and differ
// only in the web tools their settings change, which reach them as an
// overlay; an organisation without settings gets the process's catalog.
func TestCatalogBuiltOncePerProcess(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := Env{}
	env.defaults()
	rt := newRuntime(st, nil, t.TempDir(), config.Config{}, env)
	defer rt.close()
	for _, org := range []string{"a", "b", "c"} {
		if err := st.CreateOrg(ctx, store.Org{ID: org, Name: org}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rt.orgs.Update(ctx, "a", settings.Update{NetworkMode: "public", Web: settings.Web{Disabled: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.orgs.Update(ctx, "b", settings.Update{NetworkMode: "public", Web: settings.Web{DuckDuckGoDisabled: true}}); err != nil {
		t.Fatal(err)
	}
	cat := func(org string) map[string]any {
		t.Helper()
		r, err := rt.orgs.Runtime(ctx, org)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, tl := range r.Catalog().Tools() {
			out[tl.Name()] = tl
		}
		return out
	}
	a, b, c := cat("a"), cat("b"), cat("c")
	for _, name := range []string{"read_file", "calculate", "read_tool_result", "ask_clarifying_question"} {
		if a[name] == nil || a[name] != b[name] || b[name] != c[name] {
			t.Errorf("%s is not the process's one tool in every organisation", name)
		}
	}
	if a["web_search"] == b["web_search"] || a["web_search"] == c["web_search"] || b["web_search"] == c["web_search"] {
		t.Error("organisations whose settings change web_search share one")
	}
}
