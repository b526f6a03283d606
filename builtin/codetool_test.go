package builtin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/sandbox/js"
	"github.com/quiverhq/quiver/turn"
)

// A Python level that cannot start leaves run_code out with the reason;
// the JavaScript level always runs.
func TestCodeRunnerLevels(t *testing.T) {
	r, why := builtin.NewCodeRunner(context.Background(), config.Config{})
	if _, ok := r.(js.Runner); !ok || why != "" {
		t.Errorf("level js: %T, %q", r, why)
	}
	cfg := config.Config{Code: config.Code{Level: "python", Bwrap: "quiver-no-such-bwrap"}}
	r, why = builtin.NewCodeRunner(context.Background(), cfg)
	if r != nil || !strings.Contains(why, "quiver-no-such-bwrap not found (install Debian bubblewrap)") {
		t.Fatalf("missing bwrap: %v, %q", r, why)
	}
	tl := builtin.CodeTool(builtin.CatalogDeps{DataDir: t.TempDir(), Config: cfg, CodeUnavailable: why})
	if got := tl.Spec().Requires(turn.Selection{}); got != why {
		t.Errorf("Requires = %q; want %q", got, why)
	}
	if !strings.Contains(tl.Spec().Description, "Python 3") {
		t.Errorf("description: %s", tl.Spec().Description)
	}
}

// run_code is declared only where the allowlist names it or its family,
// and left out with the level's reason where the level cannot run.
func TestCodeDeclaredWhenAllowlisted(t *testing.T) {
	model := turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}}
	for _, tt := range []struct {
		name        string
		allow       []string
		unavailable string
		declared    bool
	}{
		{"not allowlisted", []string{"web_search"}, "", false},
		{"by name", []string{"run_code"}, "", true},
		{"by family", []string{"code"}, "", true},
		{"allowlisted, the level cannot run", []string{"code"}, "the Python sandbox cannot run: bwrap not found", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat := builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir(), CodeUnavailable: tt.unavailable})
			ts := cat.Select(turn.Facts{Agent: turn.Agent{Allow: tt.allow}, Model: model})
			if _, ok := ts.Lookup("run_code"); ok != tt.declared {
				t.Errorf("declared = %v; want %v", ok, tt.declared)
			}
			if tt.unavailable == "" {
				return
			}
			for _, e := range ts.Excluded() {
				if e.Name == "run_code" && e.Reason == tt.unavailable {
					return
				}
			}
			t.Errorf("run_code not left out with %q: %+v", tt.unavailable, ts.Excluded())
		})
	}
}
