package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/prompt"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// builtinNames is the built-in catalog in registration order, which fixes
// the order of declarations and prompt fragments.
var builtinNames = []string{
	"list_files", "search_files", "read_file", "write_file", "edit_file", "delete_file",
	"calculate", "read_tool_result", "read_transcript", "ask_clarifying_question", "suggest_next_actions",
	"web_search", "fetch_url", "research_web",
	"save_memory", "update_memory", "forget_memory", "search_memory", "update_short_term_memory", "read_document", "search_attachments", "search_knowledge", "check_budget",
	"search_conversations", "enable_tools", "update_tasks", "run_code",
	"create_artifact", "rewrite_artifact", "update_artifact", "save_artifact", "inspect_artifact", "measure_layout", "print_pdf",
	"search_tools", "list_tools", "get_tool_schema",
	"load_skill", "schedule_task", "update_scheduled_task",
	"message_metadata", "interact_with_message", "manage_message", "create_thread", "cross_channel_message",
	"select_sticker", "view_profile_picture", "block_user", "unblock_user",
}

// everything is a turn whose agent allows every built-in family.
func everything(c *registry.Catalog) turn.Facts {
	var allow []string
	for _, t := range c.Tools() {
		allow = append(allow, t.Family())
	}
	return turn.Facts{
		Agent: turn.Agent{Allow: allow},
		Model: turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}},
	}
}

// declared is what a turn allowing everything declares, and why the rest
// is left out.
func declared(c *registry.Catalog) ([]tool.Declaration, []registry.Exclusion) {
	ts := c.Select(everything(c))
	var decls []tool.Declaration
	for _, t := range ts.Tools() {
		decls = append(decls, t.Declaration())
	}
	return decls, ts.Excluded()
}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestCatalogWithoutRepositories: a catalog built with no repositories
// (quiver tools, prompt render, agent check) registers the same tools, in
// the same order, and a turn declares the same definitions and leaves out
// the same tools for the same reasons as with a store.
func TestCatalogWithoutRepositories(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	bare := builtin.NewCatalog(builtin.CatalogDeps{DataDir: dir})
	full := builtin.NewCatalog(builtin.CatalogDeps{Results: st, Messages: st, Attachments: st, History: st, Artifacts: st, Tasks: st, DataDir: dir})
	var names []string
	for _, tl := range bare.Tools() {
		names = append(names, tl.Name())
	}
	if d := cmp.Diff(builtinNames, names); d != "" {
		t.Errorf("tools of a catalog without repositories (-want +got):\n%s", d)
	}
	bareDecls, bareExcluded := declared(bare)
	fullDecls, fullExcluded := declared(full)
	if len(bareDecls) == 0 {
		t.Fatal("a turn allowing everything declares nothing")
	}
	if d := cmp.Diff(fullDecls, bareDecls); d != "" {
		t.Errorf("declarations without repositories (-with +without):\n%s", d)
	}
	if d := cmp.Diff(fullExcluded, bareExcluded); d != "" {
		t.Errorf("exclusions without repositories (-with +without):\n%s", d)
	}
}

// TestStoreToolsWithoutStore: read_tool_result and read_transcript in a
// catalog built without repositories answer a valid call with the
// infrastructure error "<tool>: no store is open for this command"
// (store.ErrNoStore), as the stub store they were built on answered, and
// still refuse invalid arguments first.
func TestStoreToolsWithoutStore(t *testing.T) {
	cat := builtin.NewCatalog(builtin.CatalogDeps{})
	scope := tool.Scope{OrgID: "org", UserID: "u", ConversationID: "c", TurnID: "t"}
	cases := []struct {
		tool, args, want string
		infra            bool
	}{
		{"read_tool_result", `{"refs":["res_1"]}`, "read_tool_result: no store is open for this command", true},
		{"read_transcript", `{}`, "read_transcript: no store is open for this command", true},
		{"read_tool_result", `{"refs":["res_1"],"maxChars":5}`, "maxChars must be between 1024 and 20000, got 5", false},
		{"read_transcript", `{"maxChars":30000}`, "maxChars must be between 1 and 20000, got 30000", false},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			tl, ok := cat.Lookup(c.tool)
			if !ok {
				t.Fatalf("the catalog lacks %s", c.tool)
			}
			_, err := tl.Run(context.Background(), scope, json.RawMessage(c.args))
			if err == nil || err.Error() != c.want {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if tool.IsInfra(err) != c.infra || errors.Is(err, store.ErrNoStore) != c.infra {
				t.Errorf("infra %v, ErrNoStore %v; want both %v", tool.IsInfra(err), errors.Is(err, store.ErrNoStore), c.infra)
			}
		})
	}
}

// TestStoreToolsReadTheirRepositories: with repositories the same tools
// read them, in the calling turn's scope.
func TestStoreToolsReadTheirRepositories(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if err := st.PutResult(ctx, store.Result{Ref: "res_1", OrgID: "org", ConversationID: "c", TurnID: "t0", Tool: "fetch_url", Body: "the stored body", CreatedAt: at}, store.ResultQuota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendMessage(ctx, "org", store.Message{ConversationID: "c", TurnID: "t0", Role: "user", Content: "an earlier question", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	cat := builtin.NewCatalog(builtin.CatalogDeps{Results: st, Messages: st})
	scope := tool.Scope{OrgID: "org", UserID: "u", ConversationID: "c", TurnID: "t1"}
	for name, c := range map[string]struct{ args, want string }{
		"read_tool_result": {`{"refs":["res_1"]}`, "the stored body"},
		"read_transcript":  {`{}`, "an earlier question"},
	} {
		tl, _ := cat.Lookup(name)
		res, err := tl.Run(ctx, scope, json.RawMessage(c.args))
		if err != nil || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s: %+v, %v; want text with %q", name, res, err, c.want)
		}
	}
}

// TestResearchFollowsWebSearchDisabled: research_web searches with
// web_search's engines, so a deployment that disables web search leaves it
// out too, saying why; fetch_url, which does not search, stays.
func TestResearchFollowsWebSearchDisabled(t *testing.T) {
	cat := builtin.NewCatalog(builtin.CatalogDeps{Config: config.Config{Web: config.Web{Disabled: true}}})
	ts := cat.Select(turn.Facts{
		Agent: turn.Agent{Allow: []string{"web_search", "url_fetch", "research"}},
		Model: turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}},
	})
	reasons := map[string]string{}
	for _, e := range ts.Excluded() {
		reasons[e.Name] = e.Reason
	}
	want := map[string]string{
		"web_search":   "web search is disabled in config",
		"research_web": "it searches with web_search, and web search is disabled in config",
	}
	for name, reason := range want {
		if reasons[name] != reason {
			t.Errorf("%s left out with %q, want %q", name, reasons[name], reason)
		}
	}
	if _, ok := ts.Lookup("fetch_url"); !ok {
		t.Error("fetch_url is left out, but it does not search")
	}
}

// TestOrgCatalogEqualsRebuilt: an organisation's catalog as an overlay of
// the process's one catalog declares exactly what a catalog rebuilt under
// its configuration does, for configurations that change the web tools
// (disabled, other engines and keys, excluded providers, a self-hosted
// network), and leaves the process's catalog as it was.
func TestOrgCatalogEqualsRebuilt(t *testing.T) {
	dir := t.TempDir()
	base := builtin.NewCatalog(builtin.CatalogDeps{DataDir: dir})
	baseDecls, baseExcluded := declared(base)
	for name, d := range map[string]builtin.CatalogDeps{
		"web disabled":      {Config: config.Config{Web: config.Web{Disabled: true}}},
		"own engines, keys": {Config: config.Config{Web: config.Web{SearXNGURL: "http://127.0.0.1:1", DuckDuckGoDisabled: true}}, Keys: map[string]string{"brave_api_key": "k"}},
		"excluded provider": {Config: config.Config{Web: config.Web{ExcludeProviders: []string{"openai"}}}},
		"self-hosted":       {Config: config.Config{Network: config.Network{Mode: "self-hosted"}}},
	} {
		t.Run(name, func(t *testing.T) {
			d.DataDir = dir
			rebuilt, overlaid := builtin.NewCatalog(d), builtin.OrgCatalog(base, d)
			wantDecls, wantExcluded := declared(rebuilt)
			gotDecls, gotExcluded := declared(overlaid)
			if diff := cmp.Diff(wantDecls, gotDecls); diff != "" {
				t.Errorf("declarations (-rebuilt +overlaid):\n%s", diff)
			}
			if diff := cmp.Diff(wantExcluded, gotExcluded); diff != "" {
				t.Errorf("exclusions (-rebuilt +overlaid):\n%s", diff)
			}
			want, err := prompt.Assemble(everything(rebuilt), rebuilt.Select(everything(rebuilt)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := prompt.Assemble(everything(overlaid), overlaid.Select(everything(overlaid)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.System, got.System); diff != "" {
				t.Errorf("system prompt, fragments in order (-rebuilt +overlaid):\n%s", diff)
			}
		})
	}
	decls, excluded := declared(base)
	if !cmp.Equal(baseDecls, decls) || !cmp.Equal(baseExcluded, excluded) {
		t.Error("overlaying changed the process's catalog")
	}
}

// TestCatalogsFor: the deployment's configuration without keys gets the
// process's one catalog itself; another configuration, or keys, gets an
// overlay of it that shares every tool but the web tools and declares
// what a catalog rebuilt under it would.
func TestCatalogsFor(t *testing.T) {
	dir := t.TempDir()
	deployment := config.Config{Web: config.Web{DuckDuckGoDisabled: true}}
	cs := builtin.NewCatalogs(builtin.CatalogDeps{DataDir: dir, Config: deployment})
	base := cs.For(deployment, nil)
	if cs.For(config.Config{Web: config.Web{DuckDuckGoDisabled: true}}, map[string]string{}) != base {
		t.Error("an equal configuration without keys got a catalog other than the process's")
	}
	byName := func(c *registry.Catalog) map[string]*tool.Tool {
		out := map[string]*tool.Tool{}
		for _, tl := range c.Tools() {
			out[tl.Name()] = tl
		}
		return out
	}
	for name, tc := range map[string]struct {
		cfg  config.Config
		keys map[string]string
	}{
		"web disabled": {cfg: config.Config{Web: config.Web{Disabled: true}}},
		"own keys":     {cfg: deployment, keys: map[string]string{"brave_api_key": "k"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := cs.For(tc.cfg, tc.keys)
			if got == base {
				t.Fatal("got the process's catalog")
			}
			b, g := byName(base), byName(got)
			if g["calculate"] != b["calculate"] || g["read_file"] != b["read_file"] || g["web_search"] == b["web_search"] {
				t.Error("the overlay does not share exactly the tools outside the web family")
			}
			wantDecls, wantExcluded := declared(builtin.NewCatalog(builtin.CatalogDeps{DataDir: dir, Config: tc.cfg, Keys: tc.keys}))
			gotDecls, gotExcluded := declared(got)
			if diff := cmp.Diff(wantDecls, gotDecls); diff != "" {
				t.Errorf("declarations (-rebuilt +For):\n%s", diff)
			}
			if diff := cmp.Diff(wantExcluded, gotExcluded); diff != "" {
				t.Errorf("exclusions (-rebuilt +For):\n%s", diff)
			}
		})
	}
}
