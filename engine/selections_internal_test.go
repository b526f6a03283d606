package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/intent"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// fullInputs is a selectionInputs with every list, map and string set,
// so that each can be changed in place.
func fullInputs() selectionInputs {
	return selectionInputs{
		sel: turn.Selection{
			Model:    turn.Model{Provider: "openai", Name: "gpt", Caps: turn.Capabilities{Tools: true}},
			Allow:    []string{"web", "memory"},
			Switches: map[string]bool{"memory": true, "web_search": false},
			Backends: []string{"embedding"}, Network: "public", Permissions: []string{"manage_messages"}, Surface: "discord",
			Attachments: 1, Skills: []turn.Skill{{Name: "pdf", Description: "Fill forms."}, {Name: "csv", Description: "Clean tables."}},
		},
		prompt: tmpl.Author("You help."),
		gate:   true, open: []string{"search", "files"},
	}
}

// settable is v itself, settable even where it is an unexported field.
func settable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// leaves calls visit with the path and a settable value of every leaf
// field under v (recursing into structs), so that a field added to
// selectionInputs, turn.Selection, turn.Model, turn.Capabilities,
// intent.GateOptions or tmpl.Authored is visited without this test
// naming it.
func leaves(path string, v reflect.Value, visit func(string, reflect.Value)) {
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			leaves(path+"."+v.Type().Field(i).Name, settable(v.Field(i)), visit)
		}
		return
	}
	visit(path, v)
}

// changes are the ways a leaf of its kind can change; each must make
// the inputs unequal.
func changes(t *testing.T, path string, v reflect.Value) []func() {
	switch v.Kind() {
	case reflect.String:
		return []func(){func() { v.SetString(v.String() + "x") }}
	case reflect.Bool:
		return []func(){func() { v.SetBool(!v.Bool()) }}
	case reflect.Int:
		return []func(){func() { v.SetInt(v.Int() + 1) }}
	case reflect.Slice:
		if v.Type().Elem() == reflect.TypeFor[turn.Skill]() && v.Len() > 0 {
			return []func(){
				func() { v.Set(reflect.Append(v, reflect.ValueOf(turn.Skill{Name: "extra"}))) },
				func() { v.Index(0).Field(0).SetString(v.Index(0).Field(0).String() + "x") },
				func() { v.Index(0).Field(1).SetString(v.Index(0).Field(1).String() + "x") },
				func() { v.Set(v.Slice(1, v.Len())) },
			}
		}
		if v.Type().Elem().Kind() != reflect.String || v.Len() == 0 {
			break
		}
		return []func(){
			func() { v.Set(reflect.Append(v, reflect.ValueOf("extra"))) },
			func() { v.Index(0).SetString(v.Index(0).String() + "x") },
			func() { v.Set(v.Slice(1, v.Len())) },
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.Bool || v.Len() == 0 {
			break
		}
		edit := func(change func(m reflect.Value)) func() {
			return func() {
				// In place, so that a clone sharing the map would see it.
				change(v)
			}
		}
		first := v.MapKeys()[0]
		return []func(){
			edit(func(m reflect.Value) { m.SetMapIndex(reflect.ValueOf("extra"), reflect.ValueOf(true)) }),
			edit(func(m reflect.Value) { m.SetMapIndex(first, reflect.ValueOf(!m.MapIndex(first).Bool())) }),
			edit(func(m reflect.Value) { m.SetMapIndex(first, reflect.Value{}) }),
		}
	}
	t.Fatalf("%s: a %s field; teach this test how it changes, and selectionInputs how to compare it", path, v.Type())
	return nil
}

// find is the settable leaf at path under root.
func find(root *selectionInputs, path string) reflect.Value {
	var out reflect.Value
	leaves("inputs", reflect.ValueOf(root).Elem(), func(p string, w reflect.Value) {
		if p == path {
			out = w
		}
	})
	return out
}

// TestSelectionInputsCompareEveryField: changing any field of a
// selection's inputs, however deep, makes them unequal to the inputs an
// entry was built from, and the copy an entry keeps (clone) does not
// change with the turn's. A field added to the inputs (or to
// turn.Selection, which tool requirements read) and left out of equal or
// clone fails here, so no entry is ever served for inputs it was not
// built from.
func TestSelectionInputsCompareEveryField(t *testing.T) {
	base := fullInputs()
	if !base.equal(base.clone()) {
		t.Fatal("inputs unequal to their clone")
	}
	visited := 0
	probe := fullInputs()
	leaves("inputs", reflect.ValueOf(&probe).Elem(), func(path string, _ reflect.Value) {
		for i := range changes(t, path, find(&probe, path)) {
			in := fullInputs()
			kept := in.clone()
			changes(t, path, find(&in, path))[i]()
			if in.equal(base) || base.equal(in) {
				t.Errorf("%s: change %d leaves the inputs equal", path, i)
			}
			if !kept.equal(base) {
				t.Errorf("%s: change %d reached the clone kept before it", path, i)
			}
			visited++
		}
	})
	if visited < 20 {
		t.Errorf("only %d changes tried; the walk missed fields", visited)
	}
}

// TestSelectionsKeepCollidingInputsApart: inputs whose hashes agree (the
// switches are counted, not spelled, in the hash) are still two entries,
// each served for its own inputs.
func TestSelectionsKeepCollidingInputsApart(t *testing.T) {
	c := NewSelections(0)
	cat := cacheCatalog()
	on, off := fullInputs(), fullInputs()
	on.sel.Switches, off.sel.Switches = map[string]bool{"memory": true}, map[string]bool{"memory": false}
	if on.hash(c.seed) != off.hash(c.seed) {
		t.Fatal("the two inputs were meant to share a bucket")
	}
	build := func(_ *registry.Catalog, in selectionInputs) *selected {
		return &selected{fixed: prompt.Request{System: fmt.Sprint(in.sel.Switches)}}
	}
	for range 2 {
		if got := c.get(cat, on, build).fixed.System; got != "map[memory:true]" {
			t.Errorf("on: entry of %s", got)
		}
		if got := c.get(cat, off, build).fixed.System; got != "map[memory:false]" {
			t.Errorf("off: entry of %s", got)
		}
	}
	if c.builds != 2 {
		t.Errorf("%d builds, want 2", c.builds)
	}
}

// TestSelectionsKeepLongListsApartByTheirMiddle: two allowlists longer
// than the hashed ends, differing only in a middle name, share a bucket
// and still get an entry each.
func TestSelectionsKeepLongListsApartByTheirMiddle(t *testing.T) {
	c := NewSelections(0)
	cat := cacheCatalog()
	a, b := fullInputs(), fullInputs()
	for i := range 4 * hashedEnds {
		a.sel.Allow = append(a.sel.Allow, fmt.Sprintf("tool%02d", i))
	}
	b.sel.Allow = slices.Clone(a.sel.Allow)
	b.sel.Allow[2*hashedEnds] = "other"
	middle := a.sel.Allow[2*hashedEnds]
	if a.hash(c.seed) != b.hash(c.seed) {
		t.Fatal("the two inputs were meant to share a bucket")
	}
	build := func(_ *registry.Catalog, in selectionInputs) *selected {
		return &selected{fixed: prompt.Request{System: in.sel.Allow[2*hashedEnds]}}
	}
	for range 2 {
		if got := c.get(cat, a, build).fixed.System; got != middle {
			t.Errorf("a: entry of %s", got)
		}
		if got := c.get(cat, b, build).fixed.System; got != "other" {
			t.Errorf("b: entry of %s", got)
		}
	}
	if c.builds != 2 {
		t.Errorf("%d builds, want 2", c.builds)
	}
}

// cacheTool is a tool whose requirement reads one part of the turn's
// selection.
func cacheTool(name, family string, requires func(turn.Selection) string) *tool.Tool {
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"q":{"type":"string"}}}`), &schema); err != nil {
		panic(err)
	}
	return tool.NewRaw(tool.Spec{Name: name, Family: family, Description: "Does " + name + ".",
		Fragments: []string{"Use " + name + " with care: {{if tool:" + name + "}}declared{{end}}."}, Requires: requires},
		&schema, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil })
}

// cacheCatalog is the built-ins with tools that require attachments,
// knowledge, a backend, a network mode, a permission and vision.
func cacheCatalog() *registry.Catalog {
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	need := func(ok bool, why string) string {
		if ok {
			return ""
		}
		return why
	}
	cat.Register(
		cacheTool("read_attachment", "documents", func(s turn.Selection) string { return need(s.Attachments > 0, "nothing attached") }),
		cacheTool("lookup_knowledge", "knowledge", func(s turn.Selection) string { return need(s.Knowledge, "no knowledge") }),
		cacheTool("speak", "voice_message", func(s turn.Selection) string { return need(s.HasBackend("speech"), "no speech backend") }),
		cacheTool("lan_probe", "network", func(s turn.Selection) string { return need(s.Network == "private", "public network") }),
		cacheTool("pin_message", "moderation", func(s turn.Selection) string { return need(s.HasPermission("manage_messages"), "no permission") }),
		cacheTool("analyze_image", "vision", func(s turn.Selection) string { return need(s.Model.Caps.Vision, "model cannot see") }),
	)
	return cat
}

// TestSelectionsServeWhatTheyWouldBuild: one engine with the caches
// prepares a sequence of turns that differ in one input each (and back),
// and each prepared turn equals what an engine without caches prepares
// for it: no entry is served for a turn it does not fit.
func TestSelectionsServeWhatTheyWouldBuild(t *testing.T) {
	catA, catB := cacheCatalog(), cacheCatalog()
	packs, err := intent.BuiltinPacks()
	if err != nil {
		t.Fatal(err)
	}
	det := intent.New(packs)
	now := func() time.Time { return time.Date(2026, 11, 29, 23, 3, 0, 0, time.UTC) }
	var cat *registry.Catalog
	rt := runtimeFunc(func() Runtime { return Runtime{Catalog: cat, Network: "public", Backends: []string{"embedding"}} })
	cached := New(Config{Runtime: rt, Detector: det, Now: now})
	fresh := New(Config{Runtime: rt, Detector: det, Now: now, NoCache: true})
	allow := []string{"web_search", "url_fetch", "documents", "knowledge", "voice_message", "network", "moderation", "vision", "memory"}
	base := func() Request {
		return Request{
			Caller: turn.Caller{UserID: "ana", DisplayName: "Ana", Timezone: "Europe/Paris"}, OrgID: "acme", DryRun: true,
			Agent: &Agent{Agent: turn.Agent{Name: "a", Prompt: tmpl.Author("You help. {{if tool_family:web_search}}Search.{{end}}"), Allow: allow},
				Model: turn.Model{Provider: "openai", Name: "gpt", Caps: turn.Capabilities{Tools: true}}},
			Message: "hello there",
		}
	}
	on := true
	steps := []struct {
		name string
		edit func(r *Request)
		cat  *registry.Catalog
	}{
		{"base", func(*Request) {}, catA},
		{"another caller", func(r *Request) { r.Caller = turn.Caller{UserID: "bo", DisplayName: "Bo"} }, catA},
		{"another catalog of equal tools", func(*Request) {}, catB},
		{"web_search switched off", func(r *Request) { r.Agent.Agent.Switches = map[string]bool{"web_search": false} }, catA},
		{"memory switched on", func(r *Request) { r.Agent.Agent.Switches = map[string]bool{"memory": true} }, catA},
		{"tool_use off", func(r *Request) { r.Agent.Agent.Switches = map[string]bool{"tool_use": false} }, catA},
		{"smaller allowlist", func(r *Request) { r.Agent.Agent.Allow = allow[:3] }, catA},
		{"no tool support", func(r *Request) { r.Agent.Model.Caps.Tools = false }, catA},
		{"vision", func(r *Request) { r.Agent.Model.Caps.Vision = true }, catA},
		{"excluded provider", func(r *Request) { r.Agent.Model.Provider = "novelai" }, catA},
		{"permission", func(r *Request) { r.Caller.Permissions = []string{"manage_messages"} }, catA},
		{"another prompt", func(r *Request) { r.Agent.Agent.Prompt = tmpl.Author("Be terse.") }, catA},
		{"mode on, search", func(r *Request) {
			r.Deliberate, r.Message = &intent.Settings{Enabled: true}, "search the web for flights"
		}, catA},
		{"mode on, files", func(r *Request) {
			r.Deliberate, r.Message = &intent.Settings{Enabled: true}, "read the file notes.txt in my workspace"
		}, catA},
		{"mode on, helpers gated", func(r *Request) {
			r.Deliberate, r.Message = &intent.Settings{Enabled: true, GateAlwaysOn: true}, "search the web for flights"
		}, catA},
		{"mode forced on by the user", func(r *Request) {
			r.Deliberate, r.Message = &intent.Settings{UserMode: intent.UserOn}, "search the web for flights"
		}, catA},
		{"mode on through the agent", func(r *Request) {
			r.Agent.Agent.Deliberate.Enabled = &on
			r.Deliberate, r.Message = &intent.Settings{Enabled: true}, "calculate 6 * 7"
		}, catA},
		{"base again", func(*Request) {}, catA},
	}
	ctx := context.Background()
	for _, step := range steps {
		r := base()
		step.edit(&r)
		cat = step.cat
		got, want := prepareView(t, ctx, cached, r), prepareView(t, ctx, fresh, r)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: cached turn differs from a fresh one (-fresh +cached):\n%s", step.name, diff)
		}
	}
	// Reused: the other caller's, the base again, and the mode forced on
	// by the user (the same inputs as the mode on with that message).
	if builds := cached.cfg.Selections.builds; builds != len(steps)-3 {
		t.Errorf("%d selections built for %d turns; want one for each but three", builds, len(steps))
	}
}

// prepareView is what a prepared turn shows of its selection.
func prepareView(t *testing.T, ctx context.Context, e *Engine, r Request) map[string]any {
	t.Helper()
	c, err := e.Collect(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Prepare(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"names": p.Start.Toolset.Names(), "excluded": p.Start.Toolset.Excluded(), "fragments": p.Start.Toolset.Fragments(),
		"selected": p.Start.Toolset.Selected(), "request": p.Start.Request, "declared": p.Intent.Declared,
		"open": p.Intent.Open, "active": p.Intent.Active,
	}
}

// runtimeFunc is a RuntimeSource calling a function.
type runtimeFunc func() Runtime

func (f runtimeFunc) Runtime(context.Context, string) (Runtime, error) { return f(), nil }

// TestSelectionsFollowTheCatalog: a tool registered after a selection
// was kept is in the next turn's toolset (a catalog only grows, and its
// length is in the key), and two catalogs never share an entry.
func TestSelectionsFollowTheCatalog(t *testing.T) {
	cat := cacheCatalog()
	eng := New(Config{Runtime: StaticRuntime(Runtime{Catalog: cat})})
	r := Request{Caller: turn.Caller{UserID: "ana"}, OrgID: "acme", DryRun: true,
		Agent: &Agent{Agent: turn.Agent{Name: "a", Allow: []string{"late"}},
			Model: turn.Model{Provider: "openai", Name: "gpt", Caps: turn.Capabilities{Tools: true}}}}
	ctx := context.Background()
	names := func() []string {
		c, err := eng.Collect(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		p, err := eng.Prepare(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return p.Start.Toolset.Names()
	}
	if got := names(); slices.Contains(got, "late") {
		t.Fatalf("toolset %s holds a tool not registered yet", got)
	}
	cat.Register(cacheTool("late", "late", nil))
	if got := names(); !slices.Contains(got, "late") {
		t.Errorf("toolset %s: the tool registered since is missing (a stale selection)", got)
	}
	if eng.cfg.Selections.builds != 2 {
		t.Errorf("%d builds, want 2", eng.cfg.Selections.builds)
	}
}

// TestSelectionsBounded: past its size the cache is emptied, never grown.
func TestSelectionsBounded(t *testing.T) {
	c := NewSelections(3)
	cat := cacheCatalog()
	build := func(*registry.Catalog, selectionInputs) *selected { return &selected{} }
	for i := range 10 {
		in := fullInputs()
		in.sel.Network = fmt.Sprint(i)
		c.get(cat, in, build)
		if len(c.entries) > 3 {
			t.Fatalf("%d entries after %d inputs; at most 3", len(c.entries), i+1)
		}
	}
	if c.builds != 10 {
		t.Errorf("%d builds for 10 distinct inputs", c.builds)
	}
}

// BenchmarkSelectionLookup is what finding a kept selection costs a
// turn whose agent allows 250 tools by name: the hash and the
// comparison with the entry's inputs.
func BenchmarkSelectionLookup(b *testing.B) {
	in := fullInputs()
	for i := range 250 {
		in.sel.Allow = append(in.sel.Allow, fmt.Sprintf("mcp_server%02d_tool%04d", i%10, i))
	}
	kept, seed := in.clone(), maphash.MakeSeed()
	for b.Loop() {
		if in.hash(seed) == 0 || !kept.equal(in) {
			b.Fatal("no match")
		}
	}
}

// TestSelectionsConcurrent: turns prepared at once from many goroutines,
// over a cache small enough to be emptied meanwhile, each get the
// toolset of their own inputs (run with -race).
func TestSelectionsConcurrent(t *testing.T) {
	cat := cacheCatalog()
	eng := New(Config{Runtime: StaticRuntime(Runtime{Catalog: cat}), Selections: NewSelections(2)})
	ctx := context.Background()
	allows := [][]string{{"documents"}, {"knowledge"}, {"web_search"}, nil}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				allow := allows[(g+i)%len(allows)]
				r := Request{Caller: turn.Caller{UserID: "ana"}, OrgID: "acme", DryRun: true,
					Agent: &Agent{Agent: turn.Agent{Name: "a", Allow: allow},
						Model: turn.Model{Provider: "openai", Name: "gpt", Caps: turn.Capabilities{Tools: true}}}}
				c, err := eng.Collect(ctx, r)
				if err != nil {
					t.Error(err)
					return
				}
				p, err := eng.Prepare(ctx, c)
				if err != nil {
					t.Error(err)
					return
				}
				want := len(cat.Select(c.Facts()).Names())
				if got := p.Start.Toolset.Len(); got != want {
					t.Errorf("allow %v: %d tools, want %d", allow, got, want)
				}
			}
		})
	}
	wg.Wait()
}

// freshCatalogs is a ToolSource that builds a new turn catalog for every
// turn, as an organisation with MCP servers gets.
type freshCatalogs struct{}

func (freshCatalogs) TurnCatalog(_ context.Context, _, _ string, base *registry.Catalog) *registry.Catalog {
	return base.With(registry.Overlay{Tools: []*tool.Tool{cacheTool("srv__lookup", "mcp:srv", nil)}})
}

// TestSelectionsSkipTurnCatalogs: turns whose catalog was built for them
// alone are selected anew and keep nothing (their entries would never
// be found again), and still declare the overlay's tools.
func TestSelectionsSkipTurnCatalogs(t *testing.T) {
	eng := New(Config{Runtime: StaticRuntime(Runtime{Catalog: cacheCatalog()}), Tools: freshCatalogs{}})
	r := Request{Caller: turn.Caller{UserID: "ana"}, OrgID: "acme", DryRun: true,
		Agent: &Agent{Agent: turn.Agent{Name: "a", Allow: []string{"mcp:srv"}},
			Model: turn.Model{Provider: "openai", Name: "gpt", Caps: turn.Capabilities{Tools: true}}}}
	ctx := context.Background()
	for range 3 {
		c, err := eng.Collect(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		p, err := eng.Prepare(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(p.Start.Toolset.Names(), "srv__lookup") {
			t.Fatalf("toolset %v without the turn catalog's tool", p.Start.Toolset.Names())
		}
	}
	if n := eng.cfg.Selections.n; n != 0 {
		t.Errorf("%d entries kept for turn catalogs", n)
	}
}
