package prompt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

type cacheIn struct {
	Query string `json:"query"`
}

// cacheCatalog has a tool whose fragment uses a macro and a capability,
// and a second one of another family.
func cacheCatalog(fragment string) *registry.Catalog {
	h := func(context.Context, tool.Scope, cacheIn) (string, error) { return "", nil }
	c := registry.New()
	c.Register(
		tool.New(tool.Spec{Name: "search", Description: "Search.", Fragments: []string{fragment}}, h),
		tool.New(tool.Spec{Name: "read_file", Description: "Read.", Family: "workspace"}, h),
	)
	return c
}

func cacheFacts(prompt string, allow ...string) turn.Facts {
	return turn.Facts{
		TurnID: "t", Start: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
		Caller: turn.Caller{UserID: "u", DisplayName: "Ana", Timezone: "UTC"},
		Agent:  turn.Agent{Name: "a", Prompt: tmpl.Author(prompt), Allow: allow},
		Model:  turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}},
	}
}

// TestCacheSystem: a cached system prompt is byte for byte the one
// System renders, rendered once for the same inputs whatever the caller
// or clock, and once more for each input that changes it: the agent's
// prompt, the toolset, a tool's fragment under the same name (another
// organisation's catalog), the capabilities.
func TestCacheSystem(t *testing.T) {
	const frag = "{{if capability:tool_use}}Use search wisely.{{end}}"
	c := NewCache(0)
	check := func(what string, cat *registry.Catalog, f turn.Facts, wantRenders int) {
		t.Helper()
		ts := cat.Select(f)
		got, err := c.Assemble(f, ts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Assemble(f, ts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: cached request (-want +got):\n%s", what, diff)
		}
		if c.renders != wantRenders {
			t.Errorf("%s: %d renders, want %d", what, c.renders, wantRenders)
		}
	}
	cat := cacheCatalog(frag)
	f := cacheFacts("Be brief.", "search")
	check("first turn", cat, f, 1)
	other := f
	other.Caller, other.Start = turn.Caller{UserID: "v", DisplayName: "Bùi", Timezone: "Asia/Ho_Chi_Minh"}, f.Start.Add(time.Hour)
	check("another caller, later", cat, other, 1)
	check("another prompt", cat, cacheFacts("Be long.", "search"), 2)
	check("another toolset", cat, cacheFacts("Be brief.", "search", "workspace"), 3)
	check("another fragment under the same name", cacheCatalog("Never search."), f, 4)
	noTools := f
	noTools.Model.Caps.Tools = false
	check("another capability", cat, noTools, 5)
	check("the first again", cat, f, 5)
}

// TestCacheBounded: the cache holds at most its size.
func TestCacheBounded(t *testing.T) {
	c := NewCache(3)
	cat := cacheCatalog("x")
	for i := range 10 {
		f := cacheFacts(fmt.Sprint("prompt ", i), "search")
		if _, err := c.System(f, cat.Select(f)); err != nil {
			t.Fatal(err)
		}
		if len(c.entries) > 3 {
			t.Fatalf("%d entries after %d prompts, want at most 3", len(c.entries), i+1)
		}
	}
}

// BenchmarkAssemble is Assemble on a small toolset, rendered every time
// and from the cache.
func BenchmarkAssemble(b *testing.B) {
	cat := cacheCatalog("{{if capability:tool_use}}Use search wisely.{{end}}")
	f := cacheFacts(defaultPrompt, "search", "workspace")
	ts := cat.Select(f)
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			if _, err := Assemble(f, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewCache(0)
		for b.Loop() {
			if _, err := c.Assemble(f, ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCacheContextMessage: the context message with cached zones is the
// one ContextMessage writes, each zone loaded once; a name that does not
// load is the same error and is not kept; past its size the zones are
// dropped.
func TestCacheContextMessage(t *testing.T) {
	c := NewCache(2)
	for _, zone := range []string{"Asia/Ho_Chi_Minh", "Asia/Ho_Chi_Minh", "", "Europe/Paris", "America/Sao_Paulo", "Mars/Olympus"} {
		f := cacheFacts("You help.")
		f.Caller.Timezone = zone
		got, gotErr := c.ContextMessage(f)
		want, wantErr := ContextMessage(f)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("zone %q: cached %q, %v; want %q, %v", zone, got, gotErr, want, wantErr)
		}
		if len(c.zones) > 2 {
			t.Fatalf("%d zones kept; at most 2", len(c.zones))
		}
	}
	if _, ok := c.zones["Mars/Olympus"]; ok {
		t.Error("a zone that does not load was kept")
	}
	f := cacheFacts("You help.")
	f.Caller.Timezone = "America/Sao_Paulo"
	if _, err := c.ContextMessage(f); err != nil || c.zones["America/Sao_Paulo"] == nil {
		t.Errorf("America/Sao_Paulo not kept after a load (%v)", err)
	}
}

// TestFixedWithContext: Fixed and WithContext give what Assemble gives,
// and each request made from one Fixed has its own lists.
func TestFixedWithContext(t *testing.T) {
	cat := cacheCatalog("{{if capability:tool_use}}Use search wisely.{{end}}")
	f := cacheFacts("You help.", "search")
	ts := cat.Select(f)
	want, err := Assemble(f, ts)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := NewCache(0).Fixed(f, ts)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := ContextMessage(f)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fixed.WithContext(msg), fixed.WithContext(msg)
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("Fixed + WithContext (-Assemble +got):\n%s", diff)
	}
	a.Tools[0].Name = "changed"
	if b.Tools[0].Name == "changed" || fixed.Tools[0].Name == "changed" {
		t.Error("requests made from one Fixed share their definitions list")
	}
}
