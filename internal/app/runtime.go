package app

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	"github.com/quiverhq/quiver/attachment"
	"github.com/quiverhq/quiver/browser"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/builtin/chat"
	"github.com/quiverhq/quiver/builtin/fetch"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/document"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/knowledge"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/surface/webchat"
)

// runtime is what every command that runs tools opens: the store (with
// the refusal to start on unreadable tokens), the MCP registrations and
// connection pool, and the built-in catalog. close releases them.
type runtime struct {
	st  store.Store
	mcp *mcpRuntime
	// orgs gives each organisation its configuration and built-in catalog
	// (the deployment's with the organisation's settings applied).
	orgs *settings.Service
	// ids makes the ids the commands hand out themselves (a chat's new
	// conversation).
	ids ids.Source
	// quota bounds the tool results every dispatcher over st stores.
	quota store.ResultQuota
	// embeddings gives each organisation its embedding model: the one
	// embed.Source the memory tools and indexers share.
	embeddings *embeddings
	// attach stores the files people attach (the API, the CLI, the UI).
	attach *attachment.Adder
	// knowledge indexes and searches agents' documents.
	knowledge *knowledge.Index
	// workspaces is the folder of every user's workspace (the workspace
	// tools' Root), where erasing a user removes theirs.
	workspaces string
	// browser is the artifact checks' Chromium, nil when none runs here;
	// close stops it.
	browser *browser.Lazy
	// wake tells this process's scheduler, once it runs (quiver serve),
	// that a task tool changed a task.
	wake *waker
}

// newRuntime builds the runtime over an open store (which it then owns).
func newRuntime(st store.Store, kr *secret.Keyring, dir string, cfg config.Config, env Env) *runtime {
	m := newMCPRuntime(cfg, st, kr, env)
	// The models engines open under the settings (quiver serve's); one
	// pooled HTTP client and one set of tool caches serve every turn.
	ms := models{providers.Shared{Getenv: env.Getenv, Probe: &http.Client{Timeout: 5 * time.Second}, HTTPClient: providers.NewHTTPClient(), Logger: env.Logger, Tools: providers.NewToolCaches(0)}}
	// The process's one built-in catalog; an organisation's settings reach
	// it as an overlay of the tools they change (builtin.Catalogs.For).
	emb := newEmbeddings(ms)
	readPDF := fetch.DefaultPDFReader()
	kn := &knowledge.Index{Store: st, Embedders: emb, Extractor: document.Extractor{ReadPDF: readPDF}, Now: env.Now}
	// run_code's level; one that cannot run here leaves the tool out,
	// with the reason, rather than the server.
	codeRunner, codeUnavailable := builtin.NewCodeRunner(context.Background(), cfg)
	if codeUnavailable != "" && env.Logger != nil {
		env.Logger.Warn("run_code is left out", "reason", codeUnavailable)
	}
	// The artifact checks' browser starts on the first check; none found
	// leaves the checks out, with the reason.
	chromium, browserUnavailable := builtin.NewBrowser(cfg)
	if browserUnavailable != "" && env.Logger != nil {
		env.Logger.Warn("artifact checks are left out", "reason", browserUnavailable)
	}
	var checker browser.Checker
	if chromium != nil {
		checker = chromium
	}
	wake := &waker{}
	catalogs := builtin.NewCatalogs(builtin.CatalogDeps{Results: st, Messages: st, Intents: st, DataDir: dir, Config: cfg, Getenv: env.Getenv, MCP: m.pool, ReadPDF: readPDF,
		Memories: st, ShortTerms: st, Attachments: st, Knowledge: kn, Embeddings: emb, Budgets: st, Now: env.Now, History: st, KnowledgeDocuments: st,
		Code: codeRunner, CodeUnavailable: codeUnavailable, Artifacts: st, Browser: checker, BrowserUnavailable: browserUnavailable,
		Skills: st, Tasks: st, Conversations: st, WakeScheduler: wake.Wake,
		Surfaces: chat.Set{surface.WebChat: webchat.New(webchat.Config{Store: st, Now: env.Now})}})
	orgs := settings.New(settings.Config{
		Store: st, Keyring: kr, Base: cfg, Getenv: env.Getenv, Now: env.Now, Logger: env.Logger, Models: ms.opener,
		ProviderKey: func(provider string) string { return ms.set(cfg).Connection(provider).Key },
		Build:       catalogs.For,
	})
	emb.orgs = orgs
	attach := attachment.New(attachment.Config{Store: st, Embed: emb, Extract: document.Extractor{ReadPDF: readPDF},
		Now: env.Now, Logger: env.Logger})
	return &runtime{st: st, mcp: m, browser: chromium, orgs: orgs, ids: ids.Random{}, quota: cfg.StoredResults.Quota(), embeddings: emb, attach: attach, knowledge: kn,
		workspaces: filepath.Join(dir, workspace.FolderName), wake: wake}
}

// openTurnSession serves the commands that run one turn's tools without
// a model (call, mcp serve): it validates the turn's input and the
// configuration, and only then opens the data folder's runtime, the
// engine over it and the turn's session (its facts and selected toolset).
// turnID names the session's turn ("" a fresh one). The caller closes the
// runtime.
func openTurnSession(ctx context.Context, in TurnInput, turnID string, df dataFlags, env Env) (*runtime, *engine.Engine, *engine.Session, error) {
	r, err := turnRequest(in)
	if err != nil {
		return nil, nil, nil, err
	}
	r.TurnID = turnID
	o, err := df.open(ctx, needRuntime, env)
	if err != nil {
		return nil, nil, nil, err
	}
	eng := o.rt.newEngine(o.cfg, nil, false, env)
	s, err := eng.Select(ctx, r)
	if err != nil {
		o.close()
		return nil, nil, nil, err
	}
	return o.rt, eng, s, nil
}

// close closes the MCP connections, then the store.
func (r *runtime) close() {
	if r.browser != nil {
		r.browser.Close()
	}
	r.mcp.Close()
	r.st.Close()
}
