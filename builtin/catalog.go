// Package builtin is the built-in catalog: every family of builtin/
// registered in order, wired to the repositories, the guarded HTTP client
// and the engine backends the deployment configures. The families
// themselves (builtin/<family>) never import it.
package builtin

import (
	"cmp"
	"context"
	"net/http"
	"path/filepath"
	"reflect"
	"time"

	"github.com/quiverhq/quiver/browser"
	"github.com/quiverhq/quiver/budget"
	"github.com/quiverhq/quiver/builtin/artifacts"
	"github.com/quiverhq/quiver/builtin/ask"
	budgettool "github.com/quiverhq/quiver/builtin/budget"
	"github.com/quiverhq/quiver/builtin/calc"
	"github.com/quiverhq/quiver/builtin/chat"
	"github.com/quiverhq/quiver/builtin/checklist"
	"github.com/quiverhq/quiver/builtin/code"
	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/builtin/documents"
	"github.com/quiverhq/quiver/builtin/fetch"
	"github.com/quiverhq/quiver/builtin/history"
	"github.com/quiverhq/quiver/builtin/knowledge"
	"github.com/quiverhq/quiver/builtin/memory"
	"github.com/quiverhq/quiver/builtin/results"
	"github.com/quiverhq/quiver/builtin/skills"
	"github.com/quiverhq/quiver/builtin/suggest"
	"github.com/quiverhq/quiver/builtin/tasks"
	"github.com/quiverhq/quiver/builtin/transcript"
	"github.com/quiverhq/quiver/builtin/web"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/js"
	"github.com/quiverhq/quiver/sandbox/python"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// CatalogDeps are what the built-in tools need to be constructed. The zero
// value builds the whole catalog, every tool declared as with a store, for
// commands that select and assemble but never dispatch.
type CatalogDeps struct {
	// Results backs read_tool_result and Messages read_transcript. Nil
	// keeps the tool, whose calls then fail with store.ErrNoStore.
	Results  store.Results
	Messages store.Messages
	// DataDir holds the workspaces (DataDir/workspaces/<org>/<user>).
	DataDir string
	// Config is the deployment configuration; the zero value means defaults.
	Config config.Config
	// Getenv reads keys named by the configuration; nil reads none.
	Getenv func(string) string
	// MCP serves engines the configuration puts on an MCP server (IAsk);
	// nil leaves them out.
	MCP FixedCaller
	// ReadPDF reads a PDF for fetch_url (the composition root gives
	// fetch.DefaultPDFReader, PDFium in a WebAssembly sandbox); nil means
	// that same reader.
	ReadPDF func(ctx context.Context, body []byte) (title, text string, err error)
	// Intents records the families enable_tools opens for a
	// conversation; nil opens them for the turn only.
	Intents discovery.Recorder
	// Memories and ShortTerms back the memory tools; nil keeps the tools,
	// whose calls then fail with store.ErrNoStore.
	Memories   store.Memories
	ShortTerms store.ShortTerms
	// Embeddings gives an organisation its embedding model (the
	// composition root's one embed.Source); nil gives none, so the
	// long-term memory tools' calls fail (turns without the "embedding"
	// backend never declare them).
	Embeddings embed.Source
	// Attachments backs read_document and search_attachments (the files
	// attached to the turn's conversation); nil keeps both tools, whose
	// calls then fail with store.ErrNoStore.
	Attachments store.Attachments
	// Knowledge backs search_knowledge (knowledge.Index). Nil keeps the
	// tool, whose calls then fail with store.ErrNoStore.
	Knowledge knowledge.Searcher
	// Budgets backs check_budget (the budgets and the month's usage);
	// nil keeps the tool, whose calls then fail with store.ErrNoStore.
	// Now is its clock; nil means clock.Now.
	Budgets budget.Store
	Now     func() time.Time
	// History backs search_conversations (what the person wrote in
	// their earlier conversations). Nil keeps the tool, whose calls then
	// fail with store.ErrNoStore.
	History store.History
	// KnowledgeDocuments backs read_document's second source, the
	// documents attached to the turn's agent (after the conversation's
	// attachments); nil keeps the source, whose lookups then fail with
	// store.ErrNoStore.
	KnowledgeDocuments store.Knowledge
	// Keys are an organisation's own engine keys by settings name
	// ("brave_api_key", "iask_api_key"); they win over the environment.
	Keys map[string]string
	// Code runs run_code's scripts at the configured level (NewCodeRunner
	// gives it) and CodeUnavailable says why that level cannot run here,
	// which leaves run_code out of every turn. A nil Code means the
	// in-process JavaScript runner for level js; for level python, a tool
	// whose calls fail with an infrastructure error (commands that never
	// dispatch).
	Code            sandbox.Runner
	CodeUnavailable string
	// Artifacts backs the artifact tools; nil keeps them, whose calls then
	// fail with store.ErrNoStore. Browser renders their visual checks
	// (NewBrowser gives it) and BrowserUnavailable says why none runs
	// here, which leaves the checks and save_artifact out of every turn
	// and saves HTML and SVG unchecked. A nil Browser with no reason keeps
	// every tool, whose checks then fail (commands that never dispatch).
	Artifacts          store.Artifacts
	Browser            browser.Checker
	BrowserUnavailable string
	// Skills backs load_skill (the skills attached to the turn's agent);
	// nil keeps the tool, whose calls then fail with store.ErrNoStore.
	Skills skills.Store
	// Tasks backs schedule_task and update_scheduled_task; nil keeps
	// them, whose calls then fail with store.ErrNoStore. Conversations
	// checks a conversation a task is to run in is the person's (nil
	// refuses any but the turn's own). WakeScheduler tells this
	// process's scheduler a task changed (nil: its poll finds it).
	Tasks         store.Tasks
	Conversations tasks.Conversations
	WakeScheduler func()
	// Surfaces are where conversations happen, for the message tools
	// (builtin/chat); nil keeps the tools, whose calls then fail with an
	// infrastructure error (commands that never dispatch).
	Surfaces chat.Surfaces
}

// NewCatalog registers every built-in tool, in the order that fixes the
// order of declarations and prompt fragments.
func NewCatalog(d CatalogDeps) *registry.Catalog {
	c := registry.New()
	c.Register(workspace.Tools(workspace.Config{Root: filepath.Join(d.DataDir, workspace.FolderName)})...)
	c.Register(
		calc.Tool(),
		results.Tool(d.Results),
		transcript.Tool(d.Messages),
		ask.Tool(),
		suggest.Tool(),
	)
	c.Register(WebTools(d)...)
	c.Register(memory.Tools(memory.Config{Memories: d.Memories, ShortTerms: d.ShortTerms, Embeddings: d.Embeddings})...)
	c.Register(DocumentTools(d)...)
	c.Register(knowledge.Tool(d.Knowledge))
	c.Register(BudgetTool(d))
	c.Register(history.Tool(d.History))
	c.Register(discovery.Tool(d.Intents))
	c.Register(checklist.Tool())
	c.Register(CodeTool(d))
	c.Register(ArtifactTools(d)...)
	c.Register(discovery.Tools()...)
	c.Register(skills.Tool(d.Skills))
	c.Register(tasks.Tools(tasks.Config{Tasks: d.Tasks, Conversations: d.Conversations, Now: d.Now, Wake: d.WakeScheduler})...)
	c.Register(chat.Tools(chat.Config{Surfaces: d.Surfaces, Now: d.Now})...)
	return c
}

// CodeTool is run_code at the configured level and limits, over d's
// workspaces and stored results. It is declared only where the agent's
// allowlist names it (family "code").
func CodeTool(d CatalogDeps) *tool.Tool {
	cc := d.Config.Code
	runner := d.Code
	if runner == nil && (cc.Level == "" || cc.Level == code.LevelJS) {
		runner = js.Runner{}
	}
	cfg := code.Config{
		Level: cc.Level, Runner: runner, Unavailable: d.CodeUnavailable, Limits: cc.Limits(),
		Workspace: workspace.Config{Root: filepath.Join(d.DataDir, workspace.FolderName)},
		Results:   d.Results,
	}
	return code.Tool(cfg)
}

// ArtifactTools are the artifact tools over d's store, browser and
// workspaces. They are declared only where the agent's allowlist names
// them (family "artifacts").
func ArtifactTools(d CatalogDeps) []*tool.Tool {
	cfg := artifacts.Config{Checker: d.Browser, Unavailable: d.BrowserUnavailable, Now: d.Now,
		Workspace: workspace.Config{Root: filepath.Join(d.DataDir, workspace.FolderName)}}
	if d.Artifacts != nil {
		cfg.Store = d.Artifacts
	}
	return artifacts.Tools(cfg)
}

// NewBrowser is the artifact checks' browser under cfg: a browser.Lazy,
// which starts Chromium on the first check, or nil with the reason no
// check can run (the checks turned off, or no Chromium found).
func NewBrowser(cfg config.Config) (b *browser.Lazy, unavailable string) {
	a := cfg.Artifacts
	if a.Browser == config.BrowserOff {
		return nil, "artifact checks are turned off (artifacts.browser: off)"
	}
	l := browser.NewLazy(browser.Options{ExecPath: a.Browser, MaxConcurrent: a.ConcurrentPages, PageTimeout: a.PageTimeout.Std()})
	if r := l.Unavailable(); r != "" {
		return nil, r + " (install the Debian package chromium)"
	}
	return l, ""
}

// NewCodeRunner starts the runner of cfg's code level: the in-process
// JavaScript runner, or the Python level after checking that bubblewrap
// and the interpreter are there and a sandbox starts (a run that takes a
// fraction of a second). When the Python level cannot run, the runner is
// nil and unavailable says why, for run_code to be left out with that
// reason instead of the server failing to start.
func NewCodeRunner(ctx context.Context, cfg config.Config) (runner sandbox.Runner, unavailable string) {
	cc := cfg.Code
	if cc.Level != code.LevelPython {
		return js.Runner{}, ""
	}
	r, err := python.New(ctx, python.Config{Bwrap: cc.Bwrap, Python: cc.Python, CPU: cc.CPU.Std(), Processes: cc.Processes})
	if err != nil {
		return nil, "the Python sandbox cannot run: " + err.Error()
	}
	return r, ""
}

// DocumentTools are read_document over d's attachments then the agent's
// knowledge documents, and search_attachments over the attachments. A nil
// d.Attachments or d.KnowledgeDocuments stays a nil interface for the
// tools, so their calls fail with store.ErrNoStore instead of a nil
// dereference.
func DocumentTools(d CatalogDeps) []*tool.Tool {
	var attached documents.Attachments
	var search documents.SearchStore
	if d.Attachments != nil {
		attached.Store, search = d.Attachments, d.Attachments
	}
	var kn documents.Knowledge
	if d.KnowledgeDocuments != nil {
		kn.Store = d.KnowledgeDocuments
	}
	return []*tool.Tool{documents.ReadTool(documents.Sources{attached, kn}), documents.SearchTool(search, d.Embeddings)}
}

// BudgetTool is check_budget over d.Budgets; a nil one stays a nil
// interface for the tool, so its calls fail with store.ErrNoStore.
func BudgetTool(d CatalogDeps) *tool.Tool {
	if d.Budgets == nil {
		return budgettool.Tool(nil, d.Now)
	}
	return budgettool.Tool(d.Budgets, d.Now)
}

// WebTools are the tools that depend on the configuration in force: the
// web family (web_search, fetch_url, research_web) under d's network
// mode, engines and keys, in registration order. Nothing else in the
// catalog does, so an organisation's settings reach its turns as an
// overlay of these on the process's one catalog (OrgCatalog), not as a
// catalog rebuilt.
func WebTools(d CatalogDeps) []*tool.Tool {
	guard := guarded(d.Config)
	search := web.New(webConfig(d, guard.HTTP()))
	pages := fetch.Config{
		Client: guard.HTTP(), SelfHosted: netguard.ParseMode(d.Config.Network.Mode) == netguard.SelfHosted,
		Crawl4AIURL: d.Config.Web.Crawl4AIURL, CheckURL: guard.CheckURL,
		// One list keeps a provider off every web tool: a model that cannot
		// use web_search well reads pages no better.
		ExcludeProviders: d.Config.Web.ExcludeProviders,
		ReadPDF:          d.ReadPDF,
	}
	return []*tool.Tool{search.Tool(), fetch.FetchTool(pages), fetch.ResearchTool(pages, chainSearcher{chain: search.Chain(), unavailable: search.Tool().Spec().Requires})}
}

// OrgCatalog is base (the process's catalog, NewCatalog of the
// deployment's configuration) with d's configuration in force: its web
// tools replaced in place by WebTools(d). It declares exactly what
// NewCatalog(d) would, without building the rest again.
func OrgCatalog(base *registry.Catalog, d CatalogDeps) *registry.Catalog {
	return base.With(registry.Overlay{Replace: WebTools(d)})
}

// Catalogs are the process's one built-in catalog (NewCatalog of the
// deployment's CatalogDeps, built once) and, over it, the catalog of each
// configuration an organisation's settings put in force. They are
// immutable and safe for concurrent use.
type Catalogs struct {
	deps CatalogDeps
	base *registry.Catalog
}

// NewCatalogs builds d's catalog once; d is the deployment's (its
// Config the deployment configuration, no Keys).
func NewCatalogs(d CatalogDeps) *Catalogs { return &Catalogs{deps: d, base: NewCatalog(d)} }

// For is the catalog under cfg with an organisation's opened keys (what
// settings.Config.Build asks for): the process's own catalog itself when
// cfg is the deployment's configuration and there are no keys, else
// OrgCatalog of it with cfg and keys in force.
func (c *Catalogs) For(cfg config.Config, keys map[string]string) *registry.Catalog {
	if len(keys) == 0 && reflect.DeepEqual(cfg, c.deps.Config) {
		return c.base
	}
	d := c.deps
	d.Config, d.Keys = cfg, keys
	return OrgCatalog(c.base, d)
}

// chainSearcher lets research_web search with web_search's engine chain,
// and only where web_search's own requirement (not disabled in config)
// holds.
type chainSearcher struct {
	chain       *web.Chain
	unavailable func(turn.Selection) string
}

// Unavailable returns why web_search cannot serve the turn, or "".
func (s chainSearcher) Unavailable(f turn.Selection) string { return s.unavailable(f) }

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
	return netguard.New(netguard.Config{Mode: netguard.ParseMode(cfg.Network.Mode)})
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
		cfg.IAsk.Backend = &iaskMCP{svc: d.MCP, target: iaskTarget(w.IAskMCPURL, w.IAskMCPTokenEnv, getenv), tool: name}
	}
	return cfg
}
