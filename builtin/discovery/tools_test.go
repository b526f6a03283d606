package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// fakeCatalog is a turn's catalog: its available tools and those
// declared.
type fakeCatalog struct {
	tools    []*tool.Tool
	declared []string
}

func (c fakeCatalog) Available() []*tool.Tool   { return c.tools }
func (c fakeCatalog) Declared(name string) bool { return slices.Contains(c.declared, name) }

// discoveryTool returns the named discovery tool.
func discoveryTool(t *testing.T, name string) *tool.Tool {
	t.Helper()
	for _, tl := range discovery.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no %s", name)
	return nil
}

func call(t *testing.T, tl *tool.Tool, c tool.Catalog, args string) tool.Result {
	t.Helper()
	ctx := context.Background()
	if c != nil {
		ctx = tool.WithCatalog(ctx, c)
	}
	res, err := tl.Run(ctx, turn.Scope{OrgID: "acme"}, json.RawMessage(args))
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}
	}
	return res
}

func TestSearchToolsDeclaresWhatItFinds(t *testing.T) {
	cat := fakeCatalog{tools: catalog150(t), declared: []string{"read_file", "search_tools"}}
	res := call(t, discoveryTool(t, discovery.SearchName), cat, `{"queries":["create a calendar event","open an issue in github"]}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	for _, want := range []string{"gcal__create_event", "github__create_issue"} {
		if !slices.Contains(res.Effect.Declare, want) || !strings.Contains(res.Content, want+": ") {
			t.Errorf("%s not found and declared: declare %v\n%s", want, res.Effect.Declare, res.Content)
		}
	}
	if len(res.Effect.Declare) > discovery.MaxLoaded {
		t.Errorf("declares %d tools, over %d", len(res.Effect.Declare), discovery.MaxLoaded)
	}
	// Each query's best comes first.
	if len(res.Effect.Declare) < 2 || !strings.HasPrefix(res.Effect.Declare[0], "gcal__") || !strings.HasPrefix(res.Effect.Declare[1], "github__") {
		t.Errorf("declared in order %v", res.Effect.Declare)
	}
}

func TestSearchToolsSkipsDeclaredAndItself(t *testing.T) {
	tools := catalog150(t)
	tools = append(tools, discovery.Tools()...)
	cat := fakeCatalog{tools: tools, declared: []string{"gcal__create_event"}}
	res := call(t, discoveryTool(t, discovery.SearchName), cat, `{"queries":["create calendar event","search tools"]}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	if slices.Contains(res.Effect.Declare, "gcal__create_event") || !strings.Contains(res.Content, "gcal__create_event: ") ||
		!strings.Contains(res.Content, "(declared)") {
		t.Errorf("a declared tool is shown as declared and not declared again: %v\n%s", res.Effect.Declare, res.Content)
	}
	for _, n := range discovery.Names {
		if slices.Contains(res.Effect.Declare, n) || strings.Contains(res.Content, "- "+n+":") {
			t.Errorf("search found the discovery tool %s", n)
		}
	}
}

// TestSearchToolsCaps: each bound of a call, one failing without it.
func TestSearchToolsCaps(t *testing.T) {
	tl := discoveryTool(t, discovery.SearchName)
	cat := fakeCatalog{tools: catalog150(t)}
	six := `{"queries":["a","b","c","d","e","f"]}`
	if res := call(t, tl, cat, six); !res.IsError {
		t.Errorf("6 queries accepted: %s", res.Content)
	}
	long := fmt.Sprintf(`{"queries":[%q]}`, strings.Repeat("x", discovery.MaxQueryChars+1))
	if res := call(t, tl, cat, long); !res.IsError {
		t.Errorf("a %d-character query accepted", discovery.MaxQueryChars+1)
	}
	if res := call(t, tl, cat, `{"queries":["  "]}`); !res.IsError {
		t.Errorf("a blank query accepted")
	}
	// Five broad queries find more than MaxLoaded tools; at most
	// MaxLoaded are declared, and each query shows at most PerQuery.
	res := call(t, tl, cat, `{"queries":["create","list","search","delete","update"]}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	if n := len(res.Effect.Declare); n != discovery.MaxLoaded {
		t.Errorf("declared %d tools, want the cap %d", n, discovery.MaxLoaded)
	}
	for _, block := range strings.Split(res.Content, "\n\"")[1:] {
		if n := strings.Count(block, "\n- "); n > discovery.PerQuery {
			t.Errorf("a query shows %d tools, over %d", n, discovery.PerQuery)
		}
	}
	if res := call(t, tl, nil, `{"queries":["calendar"]}`); !res.IsError || !strings.Contains(res.Content, "no tool catalog") {
		t.Errorf("outside a turn: %+v", res)
	}
}

func TestListToolsPages(t *testing.T) {
	tl := discoveryTool(t, discovery.ListName)
	tools := catalog150(t)
	cat := fakeCatalog{tools: tools}
	first := call(t, tl, cat, `{}`)
	if first.IsError || !strings.HasPrefix(first.Content, "Families: ") || strings.Count(first.Content, "\n- ") != discovery.ListPage {
		t.Fatalf("first page:\n%s", first.Content)
	}
	if !strings.Contains(first.Content, fmt.Sprintf("with offset %d.", discovery.ListPage)) {
		t.Errorf("the first page does not say where the next starts:\n%s", first.Content)
	}
	seen := 0
	for off := 0; off < len(tools); off += discovery.ListPage {
		res := call(t, tl, cat, fmt.Sprintf(`{"offset":%d}`, off))
		seen += strings.Count("\n"+res.Content, "\n- ")
	}
	if seen != len(tools) {
		t.Errorf("the pages show %d tools, want %d", seen, len(tools))
	}
	fam := call(t, tl, cat, `{"family":"mcp:weather"}`)
	if fam.IsError || !strings.Contains(fam.Content, "weather__get_forecast") || strings.Contains(fam.Content, "gcal__") {
		t.Errorf("family page:\n%s", fam.Content)
	}
	if res := call(t, tl, cat, `{"family":"nope"}`); !res.IsError || strings.Contains(res.Content, "weather") {
		t.Errorf("an unknown family: %+v", res)
	}
}

func TestGetToolSchemaDeclaresOneAndRevealsNothingElse(t *testing.T) {
	tl := discoveryTool(t, discovery.SchemaName)
	cat := fakeCatalog{tools: catalog150(t)}
	res := call(t, tl, cat, `{"name":"weather__get_forecast"}`)
	if res.IsError || !slices.Equal(res.Effect.Declare, []string{"weather__get_forecast"}) || !strings.Contains(res.Content, `"properties"`) {
		t.Fatalf("%+v", res)
	}
	res = call(t, tl, cat, `{"name":"weather__get_forcast"}`)
	if !res.IsError || res.Content != `no tool named "weather__get_forcast" is available` {
		t.Errorf("an unknown name: %q", res.Content)
	}
	cat.declared = []string{"weather__get_forecast"}
	if res := call(t, tl, cat, `{"name":"weather__get_forecast"}`); res.IsError || len(res.Effect.Declare) != 0 {
		t.Errorf("a declared tool is declared again: %+v", res)
	}
}
