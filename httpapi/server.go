// Package httpapi is Quiver's HTTP API: JSON endpoints and Server-Sent
// Events over net/http, described by an OpenAPI document that huma
// generates from the Go types. It authenticates callers (bearer API tokens
// for programs, session cookies with a CSRF token for browsers), scopes
// every query to the caller's organisation, and hands turns to an Engine.
package httpapi

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/deliberate"
	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
)

// Repositories are the parts of the store the API reads and writes
// directly: accounts (sign-in, users, tokens), agents, conversations with
// their turns and messages, Deliberate Tool Mode settings and MCP server
// registrations, long-term memories, the conversations' artifacts, erasing
// a user. Everything else goes
// through the Engine.
type Repositories interface {
	store.Accounts
	store.UserErasure
	store.Agents
	store.Conversations
	store.Turns
	store.Messages
	store.MessageMarks
	store.Branches
	store.Intents
	store.MCPServers
	store.Runs
	store.TurnEvents
	store.RateLimits
	store.Memories
	store.Budgets
	store.Usages
	store.Artifacts
}

// Config configures the API. Store and Engine are required; every other
// zero value means the default documented on its field.
type Config struct {
	Store  Repositories
	Engine Engine
	// MCP administers MCP servers (add with a connection test, enable,
	// disable, remove); nil answers those endpoints 501. Listing reads
	// the store and never needs it.
	MCP MCPAdmin
	// Knowledge adds, lists and deletes agents' knowledge documents; nil
	// answers those endpoints 501.
	Knowledge Knowledge
	// Skills stores the organisation's skills and their attachments to
	// agents; nil answers the skill endpoints 501.
	Skills store.Skills
	// Tasks stores the people's scheduled tasks; nil answers the task
	// endpoints 501. WakeScheduler tells this process's scheduler a task
	// changed (nil: its poll finds it).
	Tasks         store.Tasks
	WakeScheduler func()
	// Runs holds the conversations' running turns across replicas (leases,
	// cancel, recorded events); nil builds one over Store, Exclusive (this
	// handler is the store's only server) and with a 24-hour lease, since
	// nothing runs its Loop to renew leases.
	Runs *runs.Registry
	// Attachments stores and serves the files attached to conversations;
	// nil answers the attachment endpoints 501.
	Attachments AttachmentFiles
	// UI serves every path outside the API (/api/, /login, /healthz,
	// /openapi.*); nil answers them 404.
	UI http.Handler
	// Logger receives one line per request and every internal error;
	// nil discards.
	Logger *slog.Logger
	// Now is the clock for credentials and rate limits; nil means
	// clock.Now.
	Now func() time.Time
	// IDs makes the ids the API hands out: new conversations ("conv_…"),
	// users ("usr_…") and console runs ("run_…", never shown); nil means
	// ids.Random.
	IDs ids.Source
	// RateLimit limits how often one user may send messages.
	RateLimit RateLimit
	// MaxBody caps a request body in bytes (413 above it); 0 means 1 MiB.
	MaxBody int64
	// SessionTTL is how long a browser session lasts; 0 means 30 days.
	SessionTTL time.Duration
	// SecureCookies marks the session cookie Secure even on plain-HTTP
	// requests (TLS terminated by a proxy); it is always Secure over TLS.
	SecureCookies bool
	// Heartbeat is how often an event stream with nothing to say sends an
	// SSE comment, so proxies keep it open; 0 means 15s, negative never.
	Heartbeat time.Duration
	// Turns caps the turns this server runs at once, per user and in
	// all (429 past a cap); zero fields take the defaults.
	Turns TurnLimits
	// Embeddings gives each organisation the embedding model that an
	// edited memory's text is embedded with again (PATCH
	// /api/memories/{id}); nil, or a Source answering no model, refuses
	// such edits with 409 no_embedding_model.
	Embeddings embed.Source
	// Workspaces is the folder holding every user's workspace
	// (DATA/workspaces, workspace.Config.Root): erasing a user removes
	// theirs from it. "" removes none (a deployment without workspaces).
	Workspaces string
}

// Defaults of Config's zero values.
const (
	DefaultMaxBody    = 1 << 20
	DefaultSessionTTL = 30 * 24 * time.Hour
	DefaultHeartbeat  = 15 * time.Second
)

// APIVersion is the OpenAPI document's info.version.
const APIVersion = "1.0.0"

// server holds the API's dependencies; handlers are its methods.
type server struct {
	st            Repositories
	acc           *accounts.Service
	dtm           *deliberate.Service
	eng           Engine
	mcp           MCPAdmin
	embeddings    embed.Source
	files         AttachmentFiles
	knowledge     Knowledge
	skills        store.Skills
	tasks         store.Tasks
	wake          func()
	workspaces    string
	log           *slog.Logger
	now           func() time.Time
	ids           ids.Source
	maxBody       int64
	sessionTTL    time.Duration
	secureCookies bool
	heartbeat     time.Duration
	limiter       *limiter
	slots         *turnSlots
	// admitWait is TurnLimits.AdmitWait, or AdmitWriteWait.
	admitWait time.Duration
	turns     *runningTurns
	runs      *runs.Registry
	api       huma.API
	mux       *http.ServeMux
	// origins tells a cross-site browser request from a same-origin
	// one (the sign-in POSTs refuse it).
	origins *http.CrossOriginProtection
}

// New builds the API's handler. It panics when Store or Engine is nil or
// an operation cannot be registered: both are programming mistakes that
// must stop start-up. The handler is safe for concurrent use; running
// turns are held in the runs registry, so cancel reaches a turn on any
// replica of the store.
func New(cfg Config) http.Handler {
	if cfg.Store == nil || cfg.Engine == nil {
		panic("httpapi: Config.Store and Config.Engine are required")
	}
	if cfg.WakeScheduler == nil {
		cfg.WakeScheduler = func() {}
	}
	s := &server{
		st: cfg.Store, eng: cfg.Engine, mcp: cfg.MCP, embeddings: cfg.Embeddings, files: cfg.Attachments, knowledge: cfg.Knowledge, skills: cfg.Skills,
		tasks: cfg.Tasks, wake: cfg.WakeScheduler,
		workspaces: cfg.Workspaces, log: cfg.Logger, now: cfg.Now, ids: ids.OrRandom(cfg.IDs),
		maxBody: cfg.MaxBody, sessionTTL: cfg.SessionTTL, secureCookies: cfg.SecureCookies,
		heartbeat: cfg.Heartbeat, turns: newRunningTurns(), mux: http.NewServeMux(),
		origins: http.NewCrossOriginProtection(),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.runs = cfg.Runs; s.runs == nil {
		reg, err := runs.New(runs.Config{Runs: cfg.Store, Events: cfg.Store, Turns: cfg.Store, Now: cfg.Now, Logger: s.log,
			Exclusive: true, Lease: 24 * time.Hour, Heartbeat: time.Hour})
		if err != nil {
			panic("httpapi: " + err.Error())
		}
		s.runs = reg
	}
	if s.now == nil {
		s.now = clock.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.sessionTTL <= 0 {
		s.sessionTTL = DefaultSessionTTL
	}
	if s.heartbeat == 0 {
		s.heartbeat = DefaultHeartbeat
	}
	s.acc = &accounts.Service{Store: cfg.Store, Now: s.now, IDs: s.ids.New, SessionTTL: s.sessionTTL}
	s.dtm = &deliberate.Service{Store: cfg.Store, Now: s.now}
	s.limiter = newLimiter(cfg.RateLimit, s.now)
	s.slots = newTurnSlots(cfg.Turns)
	s.admitWait = cmp.Or(cfg.Turns.AdmitWait, AdmitWriteWait)
	s.api = humago.New(s.mux, apiConfig())
	s.api.UseMiddleware(s.authenticate)
	s.routes()
	tidyDocument(s.api.OpenAPI())
	s.mux.Handle("/", s.fallback(cfg.UI))
	return s.middleware(s.mux)
}

// apiConfig is huma's configuration: JSON only, the document at
// /openapi.json (and .yaml), no docs page (it loads scripts from a CDN)
// and no $schema links in bodies.
func apiConfig() huma.Config {
	return huma.Config{
		OpenAPI: &huma.OpenAPI{
			OpenAPI: "3.1.0",
			Info: &huma.Info{
				Title:       "Quiver",
				Version:     APIVersion,
				Description: "Quiver's HTTP API. See docs/http-api.md for the authentication model, the event stream and limits.",
			},
			Components: &huma.Components{
				Schemas: huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer),
				SecuritySchemes: map[string]*huma.SecurityScheme{
					securityBearer: {
						Type: "http", Scheme: "bearer",
						Description: "An API token from POST /api/tokens.",
					},
					securitySession: {
						Type: "apiKey", In: "cookie", Name: sessionCookie,
						Description: "A browser session from the sign-in page of a login link (POST /login) or from POST /api/login. Unsafe methods also need the X-CSRF-Token header (GET /api/me returns it).",
					},
				},
			},
		},
		OpenAPIPath:   "/openapi",
		Formats:       map[string]huma.Format{"application/json": huma.DefaultJSONFormat, "json": huma.DefaultJSONFormat},
		DefaultFormat: "application/json",
	}
}

// routes registers every operation.
func (s *server) routes() {
	s.healthRoutes()
	s.loginRoutes()
	s.sessionRoutes()
	s.tokenRoutes()
	s.conversationRoutes()
	s.conversationEditRoutes()
	s.attachmentRoutes()
	s.artifactRoutes()
	s.workspaceRoutes()
	s.branchRoutes()
	s.streamRoutes()
	s.resumeRoutes()
	s.agentRoutes()
	s.knowledgeRoutes()
	s.skillRoutes()
	s.taskRoutes()
	s.inspectDraftRoutes()
	s.mcpRoutes()
	s.toolRoutes()
	s.consoleRoutes()
	s.settingsRoutes()
	s.deliberateRoutes()
	s.userRoutes()
	s.memoryRoutes()
	s.budgetRoutes()
}

// tidyDocument makes the document say what the server does: a validation
// failure is a 400 here, never huma's 422, and a 429 comes with
// Retry-After.
func tidyDocument(doc *huma.OpenAPI) {
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			if r, ok := op.Responses["429"]; ok {
				r.Headers = map[string]*huma.Param{"Retry-After": {
					Description: "Seconds until the next message is allowed.",
					Schema:      &huma.Schema{Type: huma.TypeInteger},
				}}
			}
			if r, ok := op.Responses["422"]; ok {
				delete(op.Responses, "422")
				if _, ok := op.Responses["400"]; !ok {
					r.Description = http.StatusText(http.StatusBadRequest)
					op.Responses["400"] = r
				}
			}
		}
	}
}

// fallback answers paths no operation matched: the UI when there is one,
// else a 404 (405 when the path exists under another method), always in
// the error shape for API paths.
func (s *server) fallback(ui http.Handler) http.Handler {
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ui != nil && !isAPIPath(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return
		}
		for _, m := range methods {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
				writeError(w, apiErr(http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here"))
				return
			}
		}
		writeError(w, notFound("no such endpoint"))
	})
}

func isAPIPath(p string) bool {
	switch p {
	case "/login", "/healthz", "/api":
		return true
	}
	return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/openapi")
}

// healthRoutes registers GET /healthz.
func (s *server) healthRoutes() {
	register(s, huma.Operation{
		OperationID: "health", Method: http.MethodGet, Path: "/healthz", Tags: []string{"server"},
		Summary:     "Liveness and store reachability",
		Description: "200 when the server runs and its store answers; 503 otherwise.",
		Errors:      []int{http.StatusServiceUnavailable},
	}, public, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		if _, err := s.st.CountOrgs(ctx); err != nil {
			s.internal(ctx, "health", err)
			return nil, apiErr(http.StatusServiceUnavailable, "unavailable", "the store does not answer")
		}
		out := &healthOutput{}
		out.Body.Status = "ok"
		return out, nil
	})
}

type healthOutput struct {
	Body struct {
		Status string `json:"status" example:"ok"`
	}
}
