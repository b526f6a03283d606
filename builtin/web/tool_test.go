package web

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

func TestToolSpec(t *testing.T) {
	s := Tool(Config{}).Spec()
	type view struct {
		Name, Family string
		Macros       []string
		Access       tool.Access
		AlwaysOn     bool
	}
	want := view{Name: "web_search", Family: "web_search", Access: tool.Read,
		Macros: []string{"web_search_tool", "image_search_tool", "video_search_tool", "news_search_tool"}}
	if diff := cmp.Diff(want, view{s.Name, s.Family, s.Macros, s.Access, s.AlwaysOn}); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

// TestDefinitionSize bounds the definition at its largest: every category.
func TestDefinitionSize(t *testing.T) {
	const limit = 900
	tl := New(Config{}).ToolFor(AllCategories())
	def, err := json.Marshal(tl.Declaration())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("definition is %d characters: %s", tl.DeclarationChars(), def)
	if tl.DeclarationChars() > limit {
		t.Errorf("definition is %d characters, want at most %d", tl.DeclarationChars(), limit)
	}
}

func enumOf(t *testing.T, tl *tool.Tool) []string {
	t.Helper()
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tl.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties["category"].Enum
}

func TestCategoryEnum(t *testing.T) {
	f := newFakes(t)
	full := f.config()
	noSearx := f.config()
	noSearx.SearXNG.BaseURL = ""
	tests := []struct {
		name string
		tool func() *tool.Tool
		want []string
	}{
		{"default from config", func() *tool.Tool { return Tool(noSearx) }, []string{Text, Image, Video, News}},
		{"duckduckgo only", func() *tool.Tool { return Tool(Config{}) }, []string{Text}},
		{"turn with searxng healthy", func() *tool.Tool { return New(full).TurnTool(context.Background()) }, AllCategories()},
		{"unknown names dropped, text kept", func() *tool.Tool { return New(full).ToolFor([]string{"maps", News}) }, []string{Text, News}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, enumOf(t, tc.tool())); diff != "" {
				t.Errorf("enum (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequires(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		provider string
		want     string
	}{
		{"available by default", Config{}, "openai", ""},
		{"disabled", Config{Disabled: true}, "openai", "web search is disabled in config"},
		{"excluded provider", Config{ExcludeProviders: []string{"novelai"}}, "novelai", "provider novelai is excluded from the web tools (web.exclude_providers, in config or Settings)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Tool(tc.cfg).Spec().Requires(turn.Selection{Model: turn.Model{Provider: tc.provider}})
			if got != tc.want {
				t.Errorf("Requires = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestToolRun(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t testing.TB, f *fakes, c *Config)
		args    string
		want    string
		wantErr string
		argErr  bool
	}{
		{
			name: "numbered list with trailer", args: `{"query":"go generics","count":2}`,
			setup: func(_ testing.TB, f *fakes, _ *Config) { f.brave.set(rateLimited("60")) },
			want: "1. Tutorial: Getting started with generics\n   https://go.dev/doc/tutorial/generics\n   This tutorial introduces the basics of generics in Go.\n" +
				"2. Featherweight Generic Go\n   https://arxiv.org/abs/2104.00001\n   2021-04-01 · We present a formal model of generics.\n" +
				"[brave: rate limited; used searxng]",
		},
		{
			name: "no results", args: `{"query":"zzqqxx"}`,
			setup: func(t testing.TB, f *fakes, c *Config) {
				*c = Config{Client: c.Client, DuckDuckGo: c.DuckDuckGo}
				f.ddg.set(ok(t, "ddg_noresults.html"))
			},
			want: "No text results for \"zzqqxx\".\n[duckduckgo: no results]",
		},
		{
			name: "unavailable", args: `{"query":"go","category":"news"}`,
			setup:   func(_ testing.TB, f *fakes, _ *Config) { f.brave.set(status(500)); f.searx.set(status(502)) },
			wantErr: "web search is unavailable right now (brave: error; searxng: error)",
		},
		{name: "count over 20", args: `{"query":"go","count":21}`, argErr: true},
		{name: "count zero", args: `{"query":"go","count":0}`, argErr: true},
		{name: "unknown category", args: `{"query":"go","category":"maps"}`, argErr: true},
		{name: "empty query", args: `{"query":""}`, argErr: true},
		{name: "blank query", args: `{"query":"   "}`, wantErr: "query is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes(t)
			cfg := f.config()
			if tc.setup != nil {
				tc.setup(t, f, &cfg)
			}
			res, err := Tool(cfg).Run(context.Background(), tool.Scope{}, json.RawMessage(tc.args))
			var ae *tool.ArgError
			if got := errors.As(err, &ae); got != tc.argErr {
				t.Fatalf("Run(%s) error = %v, want an *tool.ArgError: %v", tc.args, err, tc.argErr)
			}
			if tc.argErr {
				return
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || tool.IsInfra(err) {
					t.Fatalf("Run(%s) error = %v, want model-visible %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeyNeverInOutput fails every engine in ways that echo the request
// and checks that neither key reaches the model or the trailer.
func TestKeyNeverInOutput(t *testing.T) {
	f := newFakes(t)
	cfg := f.config()
	echo := reply{status: 500, body: "bad token " + braveKey + " " + iaskKey}
	f.brave.set(echo)
	f.searx.set(echo)
	f.ddg.set(echo)
	f.iask.set(echo)
	tl := Tool(cfg)
	_, err := tl.Run(context.Background(), tool.Scope{}, json.RawMessage(`{"query":"go"}`))
	f.brave.set(ok(t, "brave_web.json"))
	f.clock.Advance(MaxCooldown)
	res, err2 := tl.Run(context.Background(), tool.Scope{}, json.RawMessage(`{"query":"go"}`))
	for _, s := range []string{errString(err), errString(err2), res.Content} {
		if strings.Contains(s, braveKey) || strings.Contains(s, iaskKey) || strings.Contains(s, "127.0.0.1") {
			t.Errorf("output leaks a key or an engine URL: %q", s)
		}
	}
	if err == nil {
		t.Error("all engines failing gave no error")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
