package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/engine"
	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/internal/serveaddr"
	"github.com/quiverhq/quiver/runs"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/backend"
	"github.com/quiverhq/quiver/webui"
)

// ServeOptions is what "quiver serve" runs with. The address is taken as
// given: the caller has checked that it is loopback unless the network is
// meant.
type ServeOptions struct {
	// Addr is the HOST:PORT listened on.
	Addr string
	// Data is the configuration and the data folder.
	Data Data
	// SecureCookies marks the session cookies Secure (HTTPS only).
	SecureCookies bool
	// Grace is how long stopping waits for running turns.
	Grace time.Duration
}

// Serve runs the HTTP API and the web UI until ctx ends. A new
// installation is set up first (an organisation, an admin and an example
// agent) and the admin's one-time login link printed on stderr; turns the
// last stop cut short are recorded as interrupted.
func Serve(ctx context.Context, o ServeOptions, env Env) error {
	env.defaults()
	data := o.Data.flags()
	cfg, err := data.loadConfig()
	if err != nil {
		return err
	}
	det, err := loadDetector(cfg)
	if err != nil {
		return err
	}
	// Locked before the store is opened (opening migrates it) and anything
	// written: a second server on one SQLite database would change it
	// under the first, and mark the first one's running turns interrupted.
	db, err := data.store(cfg, env)
	if err != nil {
		return err
	}
	release, err := backend.LockServer(db)
	if err != nil {
		return err
	}
	defer release()
	op, err := data.openUnder(ctx, cfg, needRuntime, env)
	if err != nil {
		return err
	}
	defer op.close()
	rt, st := op.rt, op.rt.st
	rc := cfg.Runs.Config()
	// SQLite is one process (the lock above): every run left is dead.
	rc.Runs, rc.Events, rc.Turns, rc.Now, rc.Logger, rc.Exclusive = st, st, st, env.Now, env.Logger, db.URL == ""
	reg, err := runs.Open(ctx, rc)
	if err != nil {
		return err
	}
	eng := rt.newEngine(cfg, det, true, env)
	handler := rt.apiHandler(eng, cfg, o.SecureCookies, reg, env)
	sched, err := rt.newScheduler(eng, reg, cfg.Scheduler, env)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	if err := serveaddr.Record(op.db.Dir, serveaddr.Listening(ln.Addr())); err != nil {
		env.Logger.Warn("quiver login-link will not know where this server listens", "err", err)
	}
	if err := bootstrap(ctx, st, env, serveaddr.Links(cfg.Server.Base(), ln.Addr())); err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(env.Stderr, "quiver: serving %s (store: %s)\n", base, op.db)
	sweeper := accounts.Sweeper{Accounts: &accounts.Service{Store: st, Now: env.Now}, RateLimits: st, Logger: env.Logger}
	background := func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Go(func() { sweeper.Run(ctx) })
		wg.Go(func() { reg.Loop(ctx) })
		if !cfg.Scheduler.Off {
			wg.Go(func() { sched.Run(ctx) })
		}
		rt.mcp.pool.Run(ctx)
		wg.Wait()
	}
	stopping := func() { fmt.Fprintln(env.Stderr, "quiver: stopping; running turns may finish") }
	return httpapi.Serve(ctx, ln, handler, httpapi.ServeConfig{Grace: o.Grace, Background: background, Stopping: stopping, Limits: cfg.HTTP.Limits()})
}

// bootstrap prepares a new installation (accounts.Service.Bootstrap:
// the default organisation, an admin, the example agent) and prints the
// admin's one-time login link to stderr. An installation already set up
// is left alone and nothing is printed.
func bootstrap(ctx context.Context, st store.Store, env Env, base string) error {
	acc := &accounts.Service{Store: st, Agents: st, Now: env.Now}
	link, made, err := acc.Bootstrap(ctx, accounts.DefaultExample())
	if err != nil || !made {
		return err
	}
	fmt.Fprintf(env.Stderr, "quiver: first start: log in as %s at %s/login?token=%s (valid 24 hours, once)\n", accounts.FirstAdminID, base, link.Secret)
	return nil
}

// LoginLinkOptions is what "quiver login-link" runs with.
type LoginLinkOptions struct {
	// User and Org name whose link it is.
	User, Org string
	// Addr is the HOST:PORT the link points at; "" means the
	// configuration's server.public_url, else where quiver serve last
	// listened (serveaddr.Base), else 127.0.0.1:8080.
	Addr string
	// Data is the configuration and the data folder.
	Data Data
}

// LoginLink issues a user a one-time login link and prints it. A user who
// does not exist or is disabled is a *UsageError.
func LoginLink(ctx context.Context, o LoginLinkOptions, env Env) error {
	env.defaults()
	op, err := o.Data.flags().open(ctx, needStore, env)
	if err != nil {
		return err
	}
	defer op.close()
	base, err := serveaddr.Base(op.db.Dir, o.Addr, op.cfg.Server.Base())
	if err != nil {
		return err
	}
	user, org := o.User, o.Org
	acc := &accounts.Service{Store: op.st, Now: env.Now}
	link, err := acc.IssueLoginLink(ctx, org, user)
	switch {
	case errors.Is(err, accounts.ErrNoUser):
		return usagef("login-link: no user %q in organisation %q", user, org)
	case errors.Is(err, accounts.ErrUserDisabled):
		return usagef("login-link: user %q is disabled (an admin can re-enable them in the web UI's People page)", user)
	case err != nil:
		return fmt.Errorf("login-link: %w", err)
	}
	fmt.Fprintf(env.Stdout, "%s/login?token=%s\n", base, link.Secret)
	return nil
}

// apiHandler is the HTTP API and web UI over the runtime: the engine with
// models shared across turns (opened once per organisation and settings
// version, see settings.Runtime.Models).
func (rt *runtime) apiHandler(eng *engine.Engine, cfg config.Config, secure bool, reg *runs.Registry, env Env) http.Handler {
	api := rt.apiEngine(eng, orgRuntimes{orgs: rt.orgs, models: true, embeddings: rt.embeddings}, env)
	return httpapi.New(httpapi.Config{
		Store: rt.st, Engine: api, MCP: apiMCP{regs: rt.mcp.regs, orgs: rt.orgs},
		Knowledge: apiKnowledge{Index: rt.knowledge, Knowledge: rt.st}, Skills: rt.st, Tasks: rt.st, WakeScheduler: rt.wake.Wake, UI: webui.Handler(), Logger: env.Logger, Now: env.Now,
		SecureCookies: secure, IDs: rt.ids, Runs: reg,
		// Memories edited on the page are embedded by the organisation's
		// model, the one the memory tools use.
		Embeddings:  rt.embeddings,
		Attachments: rt.attach,
		Workspaces:  rt.workspaces,
		Turns:       httpapi.TurnLimits{PerUser: cfg.Turns.MaxPerUser, PerServer: cfg.Turns.MaxPerServer, AdmitWait: cfg.Turns.AdmitWait.Std()},
	})
}

// apiEngine is the HTTP API's engine over eng, with the runtime's
// settings, stored agents and repositories; runtimes open ModelStatus's
// models.
func (rt *runtime) apiEngine(eng *engine.Engine, runtimes engine.RuntimeSource, env Env) httpapi.Engine {
	s := builtin.CatalogSizes()
	return httpapi.NewEngine(httpapi.EngineConfig{
		Engine: eng, Settings: rt.orgs, Runtimes: runtimes, Agents: engine.StoredAgents(rt.st, parseAgent),
		MCPServers: rt.st, Turns: rt.st, ParseAgent: parseAgent, Now: env.Now,
		Sizes: httpapi.CatalogSizes{AlwaysPaidChars: s.AlwaysPaid.Chars, AlwaysPaidCeiling: s.AlwaysPaid.Ceiling,
			WidestChars: s.Widest.Chars, WidestCeiling: s.Widest.Ceiling},
	})
}
