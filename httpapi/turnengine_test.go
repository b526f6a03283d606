package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
	"github.com/quiverhq/quiver/tmpl"
	"github.com/quiverhq/quiver/turn"
)

// helperAgent is the stored agent the adapter's tests run.
var helperAgent = engine.Agent{
	Agent: turn.Agent{Name: "helper", Prompt: tmpl.Author("You help.")},
	Model: turn.Model{Provider: "openai", Name: "m", Caps: turn.Capabilities{Tools: true}},
}

// oneAgent is engine.AgentSource with helperAgent alone.
type oneAgent struct{}

func (oneAgent) Agent(_ context.Context, _, name string) (engine.Agent, error) {
	if name != "helper" {
		return engine.Agent{}, store.ErrNotFound
	}
	return helperAgent, nil
}

// noModels is an engine.ModelOpener that opens nothing.
type noModels struct{}

func (noModels) Open(context.Context, turn.Model) (llm.Model, error) {
	return nil, errors.New("no openai key")
}

// newTurnEngine is NewEngine over a real engine and store with the
// built-in catalog; turn ids count up from turn_1.
func newTurnEngine(t *testing.T, sizes httpapi.CatalogSizes) (httpapi.Engine, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := func() time.Time { return start }
	build := func(cfg config.Config, _ map[string]string) *registry.Catalog {
		return builtin.NewCatalog(builtin.CatalogDeps{Config: cfg})
	}
	runtimes := engine.StaticRuntime(engine.Runtime{Catalog: build(config.Config{}, nil), Network: "public", Models: noModels{}})
	n := 0
	disp := dispatch.New(dispatch.Config{Results: st, Now: now})
	eng := engine.New(engine.Config{
		Repos:   engine.Repositories{Conversations: st, Messages: st, Turns: st, Intents: st},
		Runtime: runtimes, Agents: oneAgent{},
		Dispatcher: disp,
		Runner:     agent.New(agent.Config{Store: st, Dispatcher: disp, Now: now}),
		Now:        now, NewID: func(prefix string) string { n++; return prefix + strconv.Itoa(n) },
	})
	api := httpapi.NewEngine(httpapi.EngineConfig{
		Engine: eng, Settings: settings.New(settings.Config{Store: st, Build: build, Now: now}),
		Runtimes: runtimes, Agents: oneAgent{}, MCPServers: st, Turns: st, Now: now, Sizes: sizes,
		ParseAgent: func(def []byte) (engine.Agent, error) {
			ag, err := config.ParseAgent(def)
			if err != nil {
				return engine.Agent{}, err
			}
			return engine.Agent{Agent: ag.TurnAgent(), Model: helperAgent.Model}, nil
		},
	})
	return api, st
}

var ana = httpapi.Caller{OrgID: "acme", UserID: "ana", Role: store.RoleMember}

// TestNewEngineConsoleRun: a console run is recorded as a turn of the
// caller's console conversation, and a tool outside the agent's toolset
// is a *BadRequest naming it, recording nothing.
func TestNewEngineConsoleRun(t *testing.T) {
	ctx := context.Background()
	api, st := newTurnEngine(t, httpapi.CatalogSizes{})
	run, err := api.RunTool(ctx, ana, "helper", "calculate", json.RawMessage(`{"expression":"6*7"}`))
	if err != nil {
		t.Fatal(err)
	}
	if run.IsError || !strings.Contains(run.Result, "42") {
		t.Errorf("calculate: %+v", run)
	}
	rec, err := st.GetTurn(ctx, "acme", "turn_1")
	if err != nil {
		t.Fatal(err)
	}
	if want := httpapi.ConsoleConversation("ana"); rec.ConversationID != want || want != "console-ana" || rec.UserID != "ana" {
		t.Errorf("console turn in %q of %q, want console-ana of ana", rec.ConversationID, rec.UserID)
	}
	_, err = api.RunTool(ctx, ana, "helper", "nope", nil)
	var br *httpapi.BadRequest
	if !errors.As(err, &br) || br.Msg != `agent "helper" has no tool "nope" for you` {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := st.GetTurn(ctx, "acme", "turn_2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused run recorded a turn: %v", err)
	}
}

// TestNewEngineCatalogAndModelStatus: the catalog reports the configured
// sizes beside the organisation's tools; a model that does not open is a
// status with help, not an error; an unknown agent is a *BadRequest.
func TestNewEngineCatalogAndModelStatus(t *testing.T) {
	ctx := context.Background()
	sizes := httpapi.CatalogSizes{AlwaysPaidChars: 1, AlwaysPaidCeiling: 2, WidestChars: 3, WidestCeiling: 4}
	api, _ := newTurnEngine(t, sizes)
	cat, err := api.Catalog(ctx, ana)
	if err != nil {
		t.Fatal(err)
	}
	got := httpapi.CatalogSizes{AlwaysPaidChars: cat.AlwaysPaidChars, AlwaysPaidCeiling: cat.AlwaysPaidCeiling,
		WidestChars: cat.WidestChars, WidestCeiling: cat.WidestCeiling}
	if got != sizes || len(cat.Tools) != len(builtin.CatalogSizes().Tools) {
		t.Errorf("catalog sizes %+v with %d tools", got, len(cat.Tools))
	}
	ms, err := api.ModelStatus(ctx, ana, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if ms.Connected || ms.Model != "openai:m" || ms.Help != "no model is connected: no openai key (admins can add a provider key in Settings)" {
		t.Errorf("model status %+v", ms)
	}
	_, err = api.ModelStatus(ctx, ana, "ghost")
	var br *httpapi.BadRequest
	if !errors.As(err, &br) || br.Msg != `no agent named "ghost"` {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestNewEngineValidateAgent: a definition that does not parse is a
// *BadRequest with the parser's message; a valid one has its name and
// its allowlist checked against the organisation's registered servers.
func TestNewEngineValidateAgent(t *testing.T) {
	ctx := context.Background()
	api, st := newTurnEngine(t, httpapi.CatalogSizes{})
	if err := st.CreateMCPServer(ctx, store.MCPServer{ID: "srv_1", OrgID: "acme", Name: "github", URL: "https://github.example/mcp",
		Type: store.MCPGeneral, Tools: []string{"create_issue"}, CreatedAt: start, UpdatedAt: start}, 0); err != nil {
		t.Fatal(err)
	}
	_, err := api.ValidateAgent(ctx, ana, []byte("name: helper\nmodle: x\n"))
	var br *httpapi.BadRequest
	if !errors.As(err, &br) || !strings.Contains(br.Msg, `unknown key "modle"`) {
		t.Errorf("bad definition: %v", err)
	}
	v, err := api.ValidateAgent(ctx, ana, []byte("name: helper\nprompt: You help.\ntools: [github/create_issue, gitlab/*]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []registry.Warning{{Entry: "gitlab/*", Message: `no MCP server "gitlab" is registered in this organisation`, Suggestion: "github/*"}}
	if d := cmp.Diff(want, v.Allowlist); v.Name != "helper" || d != "" {
		t.Errorf("agent %q, allowlist warnings (-want +got):\n%s", v.Name, d)
	}
}
