package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/registry"
	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/tool"
)

// Defaults of Limits.
const (
	DefaultSlots            = 10
	DefaultConnectTimeout   = 15 * time.Second
	DefaultCallTimeout      = 30 * time.Second
	DefaultIdleClose        = 10 * time.Minute
	DefaultCooldown         = 5 * time.Minute
	DefaultMaxResponseBytes = 8 << 20
)

// Limits bound what registered servers may cost. Zero fields take the
// defaults above.
type Limits struct {
	// Slots is how many servers one organisation may register, enabled or
	// not.
	Slots int
	// ConnectTimeout bounds a connect plus the tool discovery.
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call.
	CallTimeout time.Duration
	// IdleClose closes a connection unused for this long.
	IdleClose time.Duration
	// Cooldown is how long a server that failed to connect is not retried.
	Cooldown time.Duration
	// MaxResponseBytes caps one HTTP response body, and each event of an
	// event stream (an SSE session carries every answer on one stream, so
	// a cap on the stream's total would fail calls of a long session).
	MaxResponseBytes int64
}

func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.Slots <= 0 {
		l.Slots = DefaultSlots
	}
	def(&l.ConnectTimeout, DefaultConnectTimeout)
	def(&l.CallTimeout, DefaultCallTimeout)
	def(&l.IdleClose, DefaultIdleClose)
	def(&l.Cooldown, DefaultCooldown)
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return l
}

// Config configures a Service.
type Config struct {
	Store store.MCPServers
	// Keyring seals auth tokens. Nil means no key is configured: a server
	// with a token cannot be added, nor a stored token used.
	Keyring *secret.Keyring
	// Network is the guarded client's policy (mode, resolver, ports). The
	// service sets its own redirect, time and size limits on top. Its Mode
	// is the deployment's: the most an organisation may be given.
	Network netguard.Config
	// ModeFor returns an organisation's network mode, which decides every
	// check and connection of that organisation's registrations (Add,
	// Overlay, calls, URL arguments). Nil means Network.Mode for every
	// organisation. A mode other than SelfHosted is Public; SelfHosted
	// when Network.Mode is not is refused. An error, or a refused mode,
	// fails closed: the organisation's servers are left out or refused,
	// never reached under another mode. It must be safe for concurrent use.
	ModeFor func(ctx context.Context, orgID string) (netguard.Mode, error)
	Limits  Limits
	// Version is sent as the client version at initialisation.
	Version string
	Now     func() time.Time
	Logger  *slog.Logger
	// NewID returns a registration ID; nil means 16 random hex digits.
	NewID func() string
}

// Service manages registrations and connections. It is safe for
// concurrent use; Close it when done.
type Service struct {
	cfg    Config
	limits Limits
	// nets holds one guarded client per mode the deployment allows.
	nets map[netguard.Mode]*network
	pool *pool
	// refreshing holds registration IDs whose snapshot write is in flight.
	refreshing sync.Map
	bg         sync.WaitGroup
	// bgMu guards closing: once Close has begun no background write
	// starts (WaitGroup.Go must not race Wait).
	bgMu    sync.Mutex
	closing bool
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	s := &Service{cfg: cfg, limits: cfg.Limits.withDefaults()}
	s.nets = newNetworks(cfg, s.limits)
	s.pool = newPool(func(ctx context.Context, key poolKey, t Target) (*Conn, error) {
		// Every key is made from a network of s.nets.
		return s.nets[key.mode].dialer.dial(ctx, t, s.limits.ConnectTimeout)
	}, cfg.Now, s.limits.Cooldown, s.limits.IdleClose)
	return s
}

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Limits returns the limits in force (defaults applied).
func (s *Service) Limits() Limits { return s.limits }

// Error is a refusal meant for the person registering a server: a field,
// a rule or the server itself said no. Its message is sanitised.
type Error struct {
	Msg string
	// Err is the store rule behind the refusal (store.ErrNameTaken,
	// ErrFamilyInUse, ErrSlotsFull, ErrNotFound), for errors.Is; nil for
	// other refusals.
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the store rule behind the refusal, if any.
func (e *Error) Unwrap() error { return e.Err }

func refusef(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// TokenAAD is the additional data that binds a sealed token to its row
// (organisation and registration ID): a ciphertext copied to another row
// does not open.
func TokenAAD(orgID, id string) []byte {
	return []byte("mcp_server/" + orgID + "/" + id + "/token")
}

// Add registers a server for an organisation, all or nothing, in this
// order: validate the fields; refuse a second enabled server of a typed
// family; enforce the slot limit; check the URL against the network
// policy of the organisation's mode; connect under that mode and discover
// the tools; store (the family and slot rules are checked again in the
// store's transaction). The new server is enabled. Refusals are *Error
// with sanitised messages; a mode that cannot be determined is an error.
func (s *Service) Add(ctx context.Context, orgID string, r Registration) (store.MCPServer, error) {
	r, err := r.normalise()
	if err != nil {
		return store.MCPServer{}, &Error{Msg: err.Error()}
	}
	if r.Token != "" && s.cfg.Keyring == nil {
		return store.MCPServer{}, refusef("token: no encryption key is configured, so tokens cannot be stored (set secrets.key_file)")
	}
	existing, err := s.cfg.Store.ListMCPServers(ctx, orgID)
	if err != nil {
		return store.MCPServer{}, fmt.Errorf("list servers: %w", err)
	}
	if err := s.checkRules(existing, r); err != nil {
		return store.MCPServer{}, err
	}
	n, err := s.networkFor(ctx, orgID)
	if err != nil {
		return store.MCPServer{}, err
	}
	if err := n.checkURL(ctx, r.URL); err != nil {
		return store.MCPServer{}, err
	}
	conn, err := n.dialer.dial(ctx, Target{URL: r.URL, Token: secret.Redacted(r.Token)}, s.limits.ConnectTimeout)
	if err != nil {
		return store.MCPServer{}, refusef("could not connect to %s: %s", Origin(r.URL), sanitise(err, r.URL, r.Token))
	}
	defer conn.Close()
	now := s.cfg.Now().UTC()
	rec := store.MCPServer{
		ID: s.cfg.NewID(), OrgID: orgID, Name: r.Name, URL: r.URL, Type: r.Type, Enabled: true,
		Tools: boundSnapshot(distinctNames(conn.Tools())), CreatedAt: now, UpdatedAt: now, DiscoveredAt: now,
	}
	if r.Token != "" {
		rec.Token, err = s.cfg.Keyring.Seal([]byte(r.Token), TokenAAD(orgID, rec.ID))
		if err != nil {
			return store.MCPServer{}, fmt.Errorf("seal token: %w", err)
		}
	}
	if err := s.cfg.Store.CreateMCPServer(ctx, rec, s.limits.Slots); err != nil {
		return store.MCPServer{}, storeRefusal(err, r.Name, r.Type, s.limits.Slots)
	}
	s.cfg.Logger.Info("mcp server added", "org", orgID, "server", rec.Name, "origin", Origin(rec.URL), "tools", len(rec.Tools))
	return rec, nil
}

// checkRules applies the name, family and slot rules to a new registration
// against the organisation's current ones.
func (s *Service) checkRules(existing []store.MCPServer, r Registration) error {
	for _, e := range existing {
		if e.Name == r.Name {
			return &Error{Msg: fmt.Sprintf("name: %q is already registered", r.Name), Err: store.ErrNameTaken}
		}
	}
	if r.Type != store.MCPGeneral {
		for _, e := range existing {
			if e.Enabled && e.Type == r.Type {
				return &Error{Msg: fmt.Sprintf("type: %s is already served by the enabled server %q; disable it first", r.Type, e.Name), Err: store.ErrFamilyInUse}
			}
		}
	}
	if len(existing) >= s.limits.Slots {
		return &Error{Msg: fmt.Sprintf("limit: this organisation already has %d servers (the limit, disabled ones included); remove one first", s.limits.Slots), Err: store.ErrSlotsFull}
	}
	return nil
}

// storeRefusal turns the store's rule errors into refusals.
func storeRefusal(err error, name, typ string, slots int) error {
	rule := func(sentinel error, format string, args ...any) error {
		return &Error{Msg: fmt.Sprintf(format, args...), Err: sentinel}
	}
	switch {
	case errors.Is(err, store.ErrNameTaken):
		return rule(store.ErrNameTaken, "name: %q is already registered", name)
	case errors.Is(err, store.ErrFamilyInUse):
		return rule(store.ErrFamilyInUse, "type: another enabled server already serves %s; disable it first", typ)
	case errors.Is(err, store.ErrSlotsFull):
		return rule(store.ErrSlotsFull, "limit: this organisation already has %d servers (the limit, disabled ones included); remove one first", slots)
	case errors.Is(err, store.ErrNotFound):
		return rule(store.ErrNotFound, "no server named %q", name)
	}
	return err
}

// List returns an organisation's registrations from stored metadata only;
// it never contacts a server. Tokens are left sealed.
func (s *Service) List(ctx context.Context, orgID string) ([]store.MCPServer, error) {
	return s.cfg.Store.ListMCPServers(ctx, orgID)
}

// SetEnabled enables or disables a server. Disabling closes its connection
// at once and clears its cooldown.
func (s *Service) SetEnabled(ctx context.Context, orgID, name string, enabled bool) error {
	rec, err := s.cfg.Store.GetMCPServer(ctx, orgID, name)
	if err != nil {
		return storeRefusal(err, name, "", s.limits.Slots)
	}
	if err := s.cfg.Store.SetMCPServerEnabled(ctx, orgID, name, enabled, s.cfg.Now().UTC()); err != nil {
		return storeRefusal(err, name, rec.Type, s.limits.Slots)
	}
	if !enabled {
		s.pool.drop(rec.ID)
	}
	return nil
}

// Remove deletes a server, closes its connection and frees its slot.
// confirmed must be true: deleting is never implicit.
func (s *Service) Remove(ctx context.Context, orgID, name string, confirmed bool) error {
	if !confirmed {
		return refusef("removing %q needs explicit confirmation", name)
	}
	rec, err := s.cfg.Store.GetMCPServer(ctx, orgID, name)
	if err != nil {
		return storeRefusal(err, name, "", s.limits.Slots)
	}
	if err := s.cfg.Store.DeleteMCPServer(ctx, orgID, name); err != nil {
		return storeRefusal(err, name, "", s.limits.Slots)
	}
	s.pool.drop(rec.ID)
	return nil
}

// Turn is what an organisation's servers give one turn.
type Turn struct {
	Overlay registry.Overlay
	// Notices are configuration problems for an admin, one line each.
	Notices []string
}

// Overlay connects (or reuses connections to) the organisation's enabled
// servers under the organisation's network mode and returns the tools a
// turn may be offered, routed against the built-in catalog base. A server
// that cannot be reached costs at most the connect timeout once, then its
// cooldown skips it at once. When the mode cannot be determined every
// server is left out as unavailable. A changed tool list is written to the
// stored snapshot in the background.
func (s *Service) Overlay(ctx context.Context, orgID string, base *registry.Catalog) (Turn, error) {
	regs, err := s.cfg.Store.ListEnabledMCPServers(ctx, orgID)
	if err != nil {
		return Turn{}, fmt.Errorf("list enabled servers: %w", err)
	}
	states := make([]serverState, len(regs))
	for i, reg := range regs {
		states[i].reg = reg
	}
	n := s.connectAll(ctx, orgID, states)
	r := route(states, base, s.importer(n))
	return Turn{Overlay: r.overlay, Notices: r.notices}, nil
}

// connectAll connects every state's registration at once under the
// organisation's network mode, and writes the changed tool lists of those
// connected. It returns the mode's network; nil, with every state left
// unavailable, when the mode cannot be determined or there is no state.
func (s *Service) connectAll(ctx context.Context, orgID string, states []serverState) *network {
	if len(states) == 0 {
		return nil // no mode to look up
	}
	n, err := s.networkFor(ctx, orgID)
	if err != nil {
		s.cfg.Logger.Warn("mcp servers left out", "org", orgID, "err", err)
		for i := range states {
			states[i].cause = errNoMode
		}
		return nil
	}
	var wg sync.WaitGroup
	for i := range states {
		wg.Go(func() {
			states[i].conn, states[i].cause = s.connect(ctx, n, states[i].reg)
			if states[i].conn != nil {
				states[i].tools = states[i].conn.Tools()
			}
		})
	}
	wg.Wait()
	for _, st := range states {
		if st.conn != nil {
			s.refreshSnapshot(st.reg, distinctNames(st.tools))
		}
	}
	return n
}

// connect returns a registration's live connection under n, or why there
// is none. A connection the registration has under another mode is closed
// first: its organisation's mode changed.
func (s *Service) connect(ctx context.Context, n *network, reg store.MCPServer) (*Conn, string) {
	key := regKey(reg, n.mode)
	s.pool.retire(key)
	if err := n.checkScheme(reg.URL); err != nil {
		return nil, err.Error()
	}
	token, err := s.openToken(reg)
	if err != nil {
		return nil, err.Error()
	}
	redact := func(err error) string { return sanitise(err, reg.URL, token.Reveal()) }
	conn, err := s.pool.get(ctx, key, Target{URL: reg.URL, Token: token}, redact)
	if err != nil {
		var cd *cooldownError
		if errors.As(err, &cd) {
			return nil, cd.Error()
		}
		return nil, redact(err)
	}
	if conn.stale.Load() {
		rctx, cancel := context.WithTimeout(ctx, s.limits.ConnectTimeout)
		defer cancel()
		if err := conn.refresh(rctx); err != nil {
			s.cfg.Logger.Warn("mcp tool list refresh failed", "server", reg.Name, "err", redact(err))
		}
	}
	return conn, ""
}

// regKey is a registration's key in the pool under a network mode.
func regKey(reg store.MCPServer, mode netguard.Mode) poolKey {
	return poolKey{id: reg.ID, url: reg.URL, sealedToken: reg.Token, mode: mode}
}

// forgetBroken closes and forgets conn when a call on it failed on the
// wire (a stream cut mid-answer, a body that is not JSON-RPC, the session
// gone), so the next call connects afresh instead of reusing a session
// that may be dead. A JSON-RPC error — the server's answer, or the SDK's
// verdict that only this request failed — keeps the connection.
func (s *Service) forgetBroken(key poolKey, conn *Conn, err error) {
	if _, answered := errors.AsType[*jsonrpc.Error](err); !answered {
		s.pool.forget(key, conn)
	}
}

// openToken unseals a registration's token; "" when it has none.
func (s *Service) openToken(reg store.MCPServer) (secret.Redacted, error) {
	if reg.Token == "" {
		return "", nil
	}
	if s.cfg.Keyring == nil {
		return "", errors.New("its auth token cannot be read: no encryption key is configured")
	}
	pt, err := s.cfg.Keyring.Open(reg.Token, TokenAAD(reg.OrgID, reg.ID))
	if err != nil {
		return "", fmt.Errorf("its auth token cannot be read: %v", err)
	}
	return secret.Redacted(pt), nil
}

// refreshSnapshot writes a registration's discovered names in the
// background when they differ from the stored ones. A failed write is
// logged and changes nothing else.
func (s *Service) refreshSnapshot(reg store.MCPServer, names []string) {
	bounded := boundSnapshot(names)
	if reg.Tools != nil && slices.Equal(reg.Tools, bounded) {
		return
	}
	if _, busy := s.refreshing.LoadOrStore(reg.ID, true); busy {
		return
	}
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.closing {
		s.refreshing.Delete(reg.ID)
		return
	}
	s.bg.Go(func() {
		defer s.refreshing.Delete(reg.ID)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.cfg.Store.SetMCPServerTools(ctx, reg.OrgID, reg.ID, bounded, s.cfg.Now().UTC()); err != nil {
			s.cfg.Logger.Warn("mcp snapshot write failed", "server", reg.Name, "err", err)
		}
	})
}

// importer builds the tool for one listed tool of a server routed under
// n: its URL arguments are vetted under n's mode, and its calls refused
// once the organisation's mode is no longer n's. n is nil only when no
// server connected, and then the importer is never called.
func (s *Service) importer(n *network) importer {
	return func(st serverState, t mcpTool, family string, macros []string, inherit tool.Spec) (*tool.Tool, error) {
		reg, name := st.reg, t.Name
		return importTool(t.Tool, importSpec{
			server: reg.Name, family: family, macros: macros,
			requires: inherit.Requires, fragments: inherit.Fragments,
			timeout:   s.limits.CallTimeout + 5*time.Second,
			checkArgs: urlArgChecker(t.InputSchema, n.guard),
			call: func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
				return s.call(ctx, reg, n.mode, name, args)
			},
		})
	}
}

// call runs one tool call on a registration's server, after checking that
// the registration is still the enabled one the turn routed (a server
// disabled or replaced meanwhile is refused, not silently used) and that
// its organisation is still in the network mode the turn routed it under.
func (s *Service) call(ctx context.Context, reg store.MCPServer, mode netguard.Mode, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if err := s.recheck(ctx, reg); err != nil {
		return nil, err
	}
	n, err := s.networkFor(ctx, reg.OrgID)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		s.cfg.Logger.Warn("mcp call refused", "org", reg.OrgID, "server", reg.Name, "err", err)
		return nil, fmt.Errorf("the MCP server %s is unavailable: %s", reg.Name, errNoMode)
	case n.mode != mode:
		return nil, fmt.Errorf("the network mode of this organisation changed since this turn started (now %s); ask again", n.mode)
	}
	conn, cause := s.connect(ctx, n, reg)
	if conn == nil {
		return nil, fmt.Errorf("the MCP server %s is unavailable: %s", reg.Name, cause)
	}
	cctx, cancel := context.WithTimeout(ctx, s.limits.CallTimeout)
	defer cancel()
	var argv any = args
	if len(args) == 0 {
		argv = map[string]any{}
	}
	res, err := conn.Call(cctx, name, argv)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cctx.Err() != nil {
			return nil, fmt.Errorf("the MCP server %s did not answer within %s", reg.Name, s.limits.CallTimeout)
		}
		s.forgetBroken(regKey(reg, n.mode), conn, err)
		token, _ := s.openToken(reg)
		return nil, fmt.Errorf("the MCP server %s failed: %s", reg.Name, sanitise(err, reg.URL, token.Reveal()))
	}
	conn.touch(s.cfg.Now())
	return res, nil
}

// recheck refuses a call when the registration the turn routed was
// removed, disabled or replaced since.
func (s *Service) recheck(ctx context.Context, reg store.MCPServer) error {
	cur, err := s.cfg.Store.GetMCPServer(ctx, reg.OrgID, reg.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("the MCP server %s was removed", reg.Name)
	case err != nil:
		return tool.Infra(fmt.Errorf("look up MCP server: %w", err))
	case cur.ID != reg.ID || cur.URL != reg.URL || cur.Type != reg.Type:
		// The sealed token is not compared: a key rotation re-seals it
		// without changing the registration (the pool key covers it).
		return fmt.Errorf("the MCP server %s changed since this turn started; ask again", reg.Name)
	case !cur.Enabled:
		return fmt.Errorf("the MCP server %s is disabled", reg.Name)
	}
	return nil
}

// Run closes idle connections every minute until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.pool.sweep()
		}
	}
}

// Close closes every connection and waits for background snapshot writes.
func (s *Service) Close() error {
	s.bgMu.Lock()
	s.closing = true
	s.bgMu.Unlock()
	s.pool.closeAll()
	s.bg.Wait()
	return nil
}

// CallFixed calls a tool of a server the deployment configures (not a
// user registration), such as an MCP-served search backend, under the
// deployment's network mode. It shares the pool, its cooldown and the call
// timeout; key names the server in the pool and in errors.
func (s *Service) CallFixed(ctx context.Context, key string, t Target, name string, args any) (*mcp.CallToolResult, error) {
	n := s.deployment()
	if err := n.checkURL(ctx, t.URL); err != nil {
		return nil, err
	}
	redact := func(err error) string { return sanitise(err, t.URL, t.Token.Reveal()) }
	pk := poolKey{id: "fixed:" + key, url: t.URL, mode: n.mode}
	conn, err := s.pool.get(ctx, pk, t, redact)
	if err != nil {
		var cd *cooldownError
		if errors.As(err, &cd) {
			return nil, fmt.Errorf("%s: %w", key, cd)
		}
		return nil, fmt.Errorf("%s: %s", key, redact(err))
	}
	cctx, cancel := context.WithTimeout(ctx, s.limits.CallTimeout)
	defer cancel()
	res, err := conn.Call(cctx, name, args)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("%s: no answer within %s: %w", key, s.limits.CallTimeout, context.DeadlineExceeded)
		}
		s.forgetBroken(pk, conn, err)
		return nil, fmt.Errorf("%s: %s", key, redact(err))
	}
	conn.touch(s.cfg.Now())
	return res, nil
}

// IsCooldown reports whether err is a server skipped during its cooldown.
func IsCooldown(err error) bool {
	var cd *cooldownError
	return errors.As(err, &cd)
}
