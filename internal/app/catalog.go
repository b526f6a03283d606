// Package app is Quiver's composition root: it builds the catalog, stores and
// dispatcher from configuration and runs the CLI commands on them.
package app

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"time"

	"github.com/quiverhq/quiver/builtin/ask"
	"github.com/quiverhq/quiver/builtin/calc"
	"github.com/quiverhq/quiver/builtin/fetch"
	"github.com/quiverhq/quiver/builtin/results"
	"github.com/quiverhq/quiver/builtin/suggest"
	"github.com/quiverhq/quiver/builtin/transcript"
	"github.com/quiverhq/quiver/builtin/web"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Ceilings on serialised tool definitions, in characters. A tool that pushes
// a total over its ceiling fails TestDefinitionCeilings: raise the ceiling in
// the same change, or write shorter.
const (
	// AlwaysPaidCeiling bounds the definitions every tool-using turn pays:
	// the six workspace tools and the five always-on helpers.
	AlwaysPaidCeiling = 13456
	// WidestCeiling bounds the widest toolset any turn can get.
	WidestCeiling = 40122
)

// Ceilings on the tools' prompt fragments, in characters of authored text,
// each distinct fragment once. Fragments are paid on every model call of a
// turn that declares their tools, like definitions; TestDefinitionCeilings
// holds them too.
const (
	// AlwaysPaidFragmentsCeiling bounds the fragments of the always-on
	// tools, which every tool-using turn's system prompt carries.
	AlwaysPaidFragmentsCeiling = 1000
	// WidestFragmentsCeiling bounds the fragments of every built-in tool.
	WidestFragmentsCeiling = 2400
)

// CatalogDeps are what the built-in tools need to be constructed.
type CatalogDeps struct {
	// Store backs read_tool_result and read_transcript. Nil means a store
	// that fails every call, for commands that assemble but never dispatch.
	Store store.Store
	// DataDir holds the workspaces (DataDir/workspaces/<org>/<user>).
	DataDir string
	// Config is the deployment configuration; the zero value means defaults.
	Config config.Config
	// Getenv reads keys named by the configuration; nil reads none.
	Getenv func(string) string
	// MCP serves engines the configuration puts on an MCP server (IAsk);
	// nil leaves them out.
	MCP *mcpclient.Pool
	// Executable is the quiver binary fetch_url runs to read PDFs in a
	// child process; "" reads them in this process.
	Executable string
	// Keys are an organisation's own engine keys by settings name
	// ("brave_api_key", "iask_api_key"); they win over the environment.
	Keys map[string]string
}

// NewCatalog registers every built-in tool, in the order that fixes the
// order of declarations and prompt fragments.
func NewCatalog(d CatalogDeps) *registry.Catalog {
	st := d.Store
	if st == nil {
		st = closedStore{}
	}
	c := registry.New()
	c.Register(workspace.Tools(workspace.Config{Root: filepath.Join(d.DataDir, "workspaces")})...)
	c.Register(
		calc.Tool(),
		results.Tool(st),
		transcript.Tool(st),
		ask.Tool(),
		suggest.Tool(),
	)
	guard := guarded(d.Config)
	search := web.New(webConfig(d, guard.HTTP()))
	pages := fetch.Config{
		Client: guard.HTTP(), SelfHosted: d.Config.Network.Mode == "self-hosted",
		Crawl4AIURL: d.Config.Web.Crawl4AIURL, CheckURL: guard.CheckURL,
		// One list keeps a provider off every web tool: a model that cannot
		// use web_search well reads pages no better.
		ExcludeProviders: d.Config.Web.ExcludeProviders,
	}
	if d.Executable != "" {
		pages.ReadPDF = pdfReader(d.Executable)
	}
	c.Register(search.Tool(), fetch.FetchTool(pages), fetch.ResearchTool(pages, chainSearcher{chain: search.Chain(), unavailable: search.Tool().Spec().Requires}))
	return c
}

// chainSearcher lets research_web search with web_search's engine chain,
// and only where web_search's own requirement (not disabled in config)
// holds.
type chainSearcher struct {
	chain       *web.Chain
	unavailable func(turn.Facts) string
}

// Unavailable returns why web_search cannot serve the turn, or "".
func (s chainSearcher) Unavailable(f turn.Facts) string { return s.unavailable(f) }

func (s chainSearcher) Search(ctx context.Context, query string, count int) ([]fetch.Hit, error) {
	out, err := s.chain.Search(ctx, web.Query{Text: query, Category: "text", Count: count})
	if err != nil {
		return nil, err
	}
	hits := make([]fetch.Hit, len(out.Results))
	for i, r := range out.Results {
		hits[i] = fetch.Hit{Title: r.Title, URL: r.URL, Snippet: r.Snippet}
	}
	return hits, nil
}

// guarded is the one client for destinations a model or user chose.
func guarded(cfg config.Config) *netguard.Client {
	mode := netguard.Public
	if cfg.Network.Mode == "self-hosted" {
		mode = netguard.SelfHosted
	}
	return netguard.New(netguard.Config{Mode: mode})
}

// webConfig configures web_search from the deployment configuration, with
// every engine request going through the guarded client.
func webConfig(d CatalogDeps, client *http.Client) web.Config {
	getenv := d.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	w := d.Config.Web
	keyEnv := w.BraveKeyEnv
	if keyEnv == "" {
		keyEnv = "BRAVE_API_KEY"
	}
	cfg := web.Config{Disabled: w.Disabled, Client: client, ExcludeProviders: w.ExcludeProviders}
	cfg.Brave.APIKey = cmp.Or(d.Keys["brave_api_key"], getenv(keyEnv))
	cfg.SearXNG.BaseURL = w.SearXNGURL
	cfg.DuckDuckGo.Disabled = w.DuckDuckGoDisabled
	cfg.IAsk.BaseURL = w.IAskURL
	if w.IAskKeyEnv != "" {
		cfg.IAsk.APIKey = getenv(w.IAskKeyEnv)
	}
	cfg.IAsk.APIKey = cmp.Or(d.Keys["iask_api_key"], cfg.IAsk.APIKey)
	if w.IAskMCPURL != "" && d.MCP != nil {
		name := w.IAskMCPTool
		if name == "" {
			name = "iask_search"
		}
		cfg.IAsk.Backend = &iaskMCP{pool: d.MCP, target: iaskTarget(w.IAskMCPURL, w.IAskMCPTokenEnv, getenv), tool: name}
	}
	return cfg
}

var errNoStore = errors.New("no store is open for this command")

// closedStore fails every call; see CatalogDeps.Store.
type closedStore struct{}

func (closedStore) PutTurn(context.Context, store.Turn) error { return errNoStore }
func (closedStore) InterruptTurns(context.Context, time.Time, time.Time) (int, error) {
	return 0, errNoStore
}
func (closedStore) GetTurn(context.Context, string, string) (store.Turn, error) {
	return store.Turn{}, errNoStore
}
func (closedStore) AppendMessage(context.Context, string, store.Message) (int64, error) {
	return 0, errNoStore
}
func (closedStore) AppendMessages(context.Context, string, []store.Message) ([]int64, error) {
	return nil, errNoStore
}
func (closedStore) ListMessages(context.Context, string, string, int64) ([]store.Message, error) {
	return nil, errNoStore
}
func (closedStore) PutResult(context.Context, store.Result) error { return errNoStore }
func (closedStore) GetResult(context.Context, string, string, string) (store.Result, error) {
	return store.Result{}, errNoStore
}
func (closedStore) PutConversation(context.Context, store.Conversation) error { return errNoStore }
func (closedStore) ClaimConversation(context.Context, store.Conversation) (store.Conversation, error) {
	return store.Conversation{}, errNoStore
}
func (closedStore) GetConversation(context.Context, string, string) (store.Conversation, error) {
	return store.Conversation{}, errNoStore
}
func (closedStore) ListConversations(context.Context, string, string, int) ([]store.Conversation, error) {
	return nil, errNoStore
}
func (closedStore) PutUsage(context.Context, store.Usage) error { return errNoStore }
func (closedStore) ListUsage(context.Context, string, string) ([]store.Usage, error) {
	return nil, errNoStore
}
func (closedStore) SumUsage(context.Context, string, string, time.Time, time.Time) (store.UsageTotal, error) {
	return store.UsageTotal{}, errNoStore
}
func (closedStore) Close() error { return nil }

func (closedStore) CreateMCPServer(context.Context, store.MCPServer, int) error { return errNoStore }
func (closedStore) GetMCPServer(context.Context, string, string) (store.MCPServer, error) {
	return store.MCPServer{}, errNoStore
}
func (closedStore) ListMCPServers(context.Context, string) ([]store.MCPServer, error) {
	return nil, errNoStore
}
func (closedStore) ListEnabledMCPServers(context.Context, string) ([]store.MCPServer, error) {
	return nil, errNoStore
}
func (closedStore) SetMCPServerEnabled(context.Context, string, string, bool, time.Time) error {
	return errNoStore
}
func (closedStore) DeleteMCPServer(context.Context, string, string) error { return errNoStore }
func (closedStore) SetMCPServerTools(context.Context, string, string, []string, time.Time) (bool, error) {
	return false, errNoStore
}
func (closedStore) CountMCPTokens(context.Context) (int, error) { return 0, errNoStore }
func (closedStore) RewrapMCPTokens(context.Context, func(store.MCPServer) (string, error)) (int, error) {
	return 0, errNoStore
}

func (closedStore) GetIntentSettings(context.Context, string) (store.IntentSettings, error) {
	return store.IntentSettings{}, errNoStore
}
func (closedStore) PutIntentSettings(context.Context, store.IntentSettings) error { return errNoStore }
func (closedStore) AddIntentTrigger(context.Context, store.IntentTrigger, int) error {
	return errNoStore
}
func (closedStore) RemoveIntentTrigger(context.Context, string, string, string) error {
	return errNoStore
}
func (closedStore) ListIntentTriggers(context.Context, string) ([]store.IntentTrigger, error) {
	return nil, errNoStore
}
func (closedStore) GetUserIntentMode(context.Context, string, string) (string, error) {
	return "", errNoStore
}
func (closedStore) SetUserIntentMode(context.Context, string, string, string) error {
	return errNoStore
}
func (closedStore) OpenIntentTargets(context.Context, string, string, []string) ([]string, error) {
	return nil, errNoStore
}

func (closedStore) CreateOrg(context.Context, store.Org) error { return errNoStore }
func (closedStore) GetOrg(context.Context, string) (store.Org, error) {
	return store.Org{}, errNoStore
}
func (closedStore) CountOrgs(context.Context) (int, error) { return 0, errNoStore }
func (closedStore) CreateUser(context.Context, store.User, ...store.Credential) error {
	return errNoStore
}
func (closedStore) GetUser(context.Context, string, string) (store.User, error) {
	return store.User{}, errNoStore
}
func (closedStore) ListUsers(context.Context, string) ([]store.User, error) {
	return nil, errNoStore
}
func (closedStore) ModifyUser(context.Context, string, string, time.Time, func(*store.User) error) (store.User, error) {
	return store.User{}, errNoStore
}
func (closedStore) PutCredential(context.Context, store.Credential) error {
	return errNoStore
}
func (closedStore) LookupCredential(context.Context, string, string, time.Time) (store.Credential, error) {
	return store.Credential{}, errNoStore
}
func (closedStore) ConsumeCredential(context.Context, string, string, time.Time) (store.Credential, error) {
	return store.Credential{}, errNoStore
}
func (closedStore) DeleteCredential(context.Context, string, string) error { return errNoStore }
func (closedStore) ListCredentials(context.Context, string, string, string) ([]store.Credential, error) {
	return nil, errNoStore
}
func (closedStore) DeleteExpiredCredentials(context.Context, time.Time) (int, error) {
	return 0, errNoStore
}

func (closedStore) PutAgent(context.Context, store.StoredAgent) error { return errNoStore }
func (closedStore) GetAgent(context.Context, string, string) (store.StoredAgent, error) {
	return store.StoredAgent{}, errNoStore
}
func (closedStore) ListAgents(context.Context, string) ([]store.StoredAgent, error) {
	return nil, errNoStore
}
func (closedStore) DeleteAgent(context.Context, string, string) error { return errNoStore }

func (closedStore) DisableUser(context.Context, string, string, time.Time) error { return errNoStore }
func (closedStore) EnableUser(context.Context, string, string, time.Time) error  { return errNoStore }
func (closedStore) GetOrgSettings(context.Context, string) (store.OrgSettings, error) {
	return store.OrgSettings{}, errNoStore
}
func (closedStore) PutOrgSettings(context.Context, store.OrgSettings) (int64, error) {
	return 0, errNoStore
}
func (closedStore) CountOrgSecrets(context.Context) (int, error) { return 0, errNoStore }
func (closedStore) RewrapOrgSecrets(context.Context, func(string, string, string) (string, error)) (int, error) {
	return 0, errNoStore
}
