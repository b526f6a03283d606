package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/quiverhq/quiver/internal/clock"
	"github.com/quiverhq/quiver/netguard"
)

// Defaults of Limits.
const (
	DefaultConnectTimeout   = 15 * time.Second
	DefaultCallTimeout      = 30 * time.Second
	DefaultIdleClose        = 10 * time.Minute
	DefaultCooldown         = 5 * time.Minute
	DefaultMaxResponseBytes = 8 << 20
)

// Limits bound what a connection to a server may cost. Zero fields take
// the defaults above.
type Limits struct {
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
	def(&l.ConnectTimeout, DefaultConnectTimeout)
	def(&l.CallTimeout, DefaultCallTimeout)
	def(&l.IdleClose, DefaultIdleClose)
	def(&l.Cooldown, DefaultCooldown)
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return l
}

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Network is the guarded client's policy (mode, resolver, ports). The
	// pool sets its own redirect, time and size limits on top. Its Mode
	// is the deployment's: the widest mode a toolset or a registration may
	// be given, and the mode of Probe and CallFixed, which belong to no
	// organisation.
	Network netguard.Config
	Limits  Limits
	// Version is sent as the client version at initialisation.
	Version string
	// Now is the clock of idle times and cooldowns; nil means clock.Now.
	Now func() time.Time
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
}

// Pool keeps the live connections to MCP servers: at most one per
// registration and network mode, connected lazily, closed when idle,
// and a server that failed to connect is not retried during its cooldown.
// Every connection goes through the guarded client of its network mode.
// It is safe for concurrent use; Close it when done.
type Pool struct {
	limits Limits
	// nets holds one guarded client per mode the deployment allows.
	nets map[netguard.Mode]*network
	// deploymentMode is PoolConfig.Network's mode, normalised.
	deploymentMode netguard.Mode
	logger         *slog.Logger

	dial     func(ctx context.Context, key poolKey, t Target) (*Conn, error)
	now      func() time.Time
	cooldown time.Duration
	idle     time.Duration

	// conns, pending and failed are per-process, and harmless when stale
	// with several replicas: every turn reads the organisation's
	// registrations from the store (a server disabled or removed on
	// another replica is not used here either; its idle connection
	// closes), a key covers the URL, the sealed token and the network
	// mode (an edit on another replica never reuses an old session), and
	// a cooldown only delays this replica's retry of a failing server.
	mu      sync.Mutex
	conns   map[poolKey]*Conn
	pending map[poolKey]*pendingDial
	// failed holds, per registration ID, when its cooldown ends and the
	// failure that started it.
	failed map[string]failure
	// closed is set by closeAll: connects finishing later close their
	// connection at once.
	closed bool
	// gens counts drops per registration ID: a connect that started
	// before a drop (disable, remove) closes its connection instead of
	// pooling it.
	gens map[string]uint64
	// seen holds, per organisation, the network mode of its latest
	// toolset or registration (see observe).
	seen map[string]netguard.Mode
}

// NewPool returns a Pool under cfg's network policy.
func NewPool(cfg PoolConfig) *Pool {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	limits := cfg.Limits.withDefaults()
	nets := newNetworks(cfg, limits)
	p := newPool(func(ctx context.Context, key poolKey, t Target) (*Conn, error) {
		// Every key is made from a network of nets.
		return nets[key.mode].dialer.dial(ctx, t, limits.ConnectTimeout)
	}, cfg.Now, limits.Cooldown, limits.IdleClose)
	p.limits, p.nets, p.logger = limits, nets, cfg.Logger
	p.deploymentMode = normalMode(cfg.Network.Mode)
	return p
}

// newPool returns a Pool that connects with dial, without networks: the
// connection mechanics alone, as NewPool and the pool's tests build them.
func newPool(dial func(context.Context, poolKey, Target) (*Conn, error), now func() time.Time, cooldown, idle time.Duration) *Pool {
	return &Pool{
		dial: dial, now: now, cooldown: cooldown, idle: idle, logger: slog.New(slog.DiscardHandler),
		conns: map[poolKey]*Conn{}, pending: map[poolKey]*pendingDial{}, failed: map[string]failure{},
		seen: map[string]netguard.Mode{},
	}
}

// Limits returns the limits in force (defaults applied).
func (p *Pool) Limits() Limits { return p.limits }

// Run closes idle connections every minute until ctx ends.
func (p *Pool) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.sweep()
		}
	}
}

// Close closes every connection; a connect finishing later closes its
// connection at once. It always returns nil.
func (p *Pool) Close() error {
	p.closeAll()
	return nil
}

// CallFixed calls a tool of a server the deployment configures (not a
// user registration), such as an MCP-served search backend, under the
// deployment's network mode. It shares the pool, its cooldown and the call
// timeout; key names the server in the pool and in errors.
func (p *Pool) CallFixed(ctx context.Context, key string, t Target, name string, args any) (*mcp.CallToolResult, error) {
	n := p.deployment()
	if err := n.checkURL(ctx, t.URL); err != nil {
		return nil, err
	}
	redact := func(err error) string { return sanitise(err, t.URL, t.Token.Reveal()) }
	pk := poolKey{id: "fixed:" + key, url: t.URL, mode: n.mode}
	conn, err := p.get(ctx, pk, t, redact)
	if err != nil {
		var cd *cooldownError
		if errors.As(err, &cd) {
			return nil, fmt.Errorf("%s: %w", key, cd)
		}
		return nil, fmt.Errorf("%s: %s", key, redact(err))
	}
	cctx, cancel := context.WithTimeout(ctx, p.limits.CallTimeout)
	defer cancel()
	res, err := conn.Call(cctx, name, args)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("%s: no answer within %s: %w", key, p.limits.CallTimeout, context.DeadlineExceeded)
		}
		p.forgetBroken(pk, conn, err)
		return nil, fmt.Errorf("%s: %s", key, redact(err))
	}
	conn.touch(p.now())
	return res, nil
}

// IsCooldown reports whether err is a server skipped during its cooldown.
func IsCooldown(err error) bool {
	var cd *cooldownError
	return errors.As(err, &cd)
}

// forgetBroken closes and forgets conn when a call on it failed on the
// wire (a stream cut mid-answer, a body that is not JSON-RPC, the session
// gone), so the next call connects afresh instead of reusing a session
// that may be dead. A JSON-RPC error — the server's answer, or the SDK's
// verdict that only this request failed — keeps the connection.
func (p *Pool) forgetBroken(key poolKey, conn *Conn, err error) {
	if _, answered := errors.AsType[*jsonrpc.Error](err); !answered {
		p.forget(key, conn)
	}
}

// observe records mode as the network mode orgID is in now: a toolset or
// a registration request of the organisation was just given it. Calls of
// an earlier toolset made under another mode are refused from then on
// (see current), so a change of mode reaches turns already running as
// soon as any newer turn or registration of the organisation carries it.
func (p *Pool) observe(orgID string, mode netguard.Mode) {
	p.mu.Lock()
	p.seen[orgID] = normalMode(mode)
	p.mu.Unlock()
}

// current returns orgID's latest observed mode and whether it is mode.
func (p *Pool) current(orgID string, mode netguard.Mode) (netguard.Mode, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.seen[orgID]
	return m, !ok || m == normalMode(mode)
}

// poolKey identifies a connection: the registration and what it connects
// with, so an edited URL or token, or a changed network mode of its
// organisation, never reuses an old session.
type poolKey struct {
	id, url, sealedToken string
	mode                 netguard.Mode
}

type pendingDial struct {
	done chan struct{}
	conn *Conn
	err  error
	// gen is the registration's generation when the connect started; a
	// drop meanwhile makes the connection stale.
	gen uint64
}

type failure struct {
	until time.Time
	msg   string
	// mode is the network mode the connect failed under: a cooldown does
	// not outlast a change of mode (a server blocked in public mode is
	// tried at once in self-hosted mode).
	mode netguard.Mode
}

// errPoolClosed answers a connect that finished after the pool closed or
// its registration was dropped.
var errPoolClosed = errors.New("the MCP server was disabled or removed, or the client is shutting down")

// cooldownError reports a server skipped because it failed recently.
type cooldownError struct {
	until time.Time
	msg   string
}

func (e *cooldownError) Error() string {
	return fmt.Sprintf("not retried before %s after a failed connect (%s)", e.until.UTC().Format(time.TimeOnly), e.msg)
}

// get returns the live connection for key, connecting when there is none.
// Concurrent gets for one key share one connect. A registration in its
// cooldown fails at once with a *cooldownError; redact turns a connect
// error into the message the cooldown repeats.
func (p *Pool) get(ctx context.Context, key poolKey, t Target, redact func(error) string) (*Conn, error) {
	p.mu.Lock()
	if c, ok := p.conns[key]; ok {
		p.mu.Unlock()
		c.touch(p.now())
		return c, nil
	}
	if f, ok := p.failed[key.id]; ok && f.mode == key.mode && p.now().Before(f.until) {
		p.mu.Unlock()
		return nil, &cooldownError{until: f.until, msg: f.msg}
	}
	pd, ok := p.pending[key]
	if !ok {
		pd = &pendingDial{done: make(chan struct{}), gen: p.gens[key.id]}
		p.pending[key] = pd
		go p.connect(key, t, pd, redact)
	}
	p.mu.Unlock()
	select {
	case <-pd.done:
		return pd.conn, pd.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connect dials for a pending get; the dial is not bound to the first
// caller's context, so one caller giving up does not fail the others.
func (p *Pool) connect(key poolKey, t Target, pd *pendingDial, redact func(error) string) {
	c, err := p.dial(context.Background(), key, t)
	p.mu.Lock()
	delete(p.pending, key)
	var superseded []*Conn
	if err == nil && (p.closed || p.gens[key.id] != pd.gen) {
		// The pool was closed, or the registration disabled or removed,
		// while this connect ran: nobody will close the connection later,
		// so it is closed now.
		superseded, c, err = []*Conn{c}, nil, errPoolClosed
	}
	switch {
	case errors.Is(err, errPoolClosed):
		// Not the server's failure: no cooldown.
	case err != nil:
		p.failed[key.id] = failure{until: p.now().Add(p.cooldown), msg: redact(err), mode: key.mode}
	default:
		delete(p.failed, key.id)
		superseded = p.dropLocked(key.id)
		p.conns[key] = c
		go p.watch(key, c)
	}
	p.mu.Unlock()
	// A connection made with an older URL or token is closed, not just
	// forgotten: its session and streams would otherwise stay open.
	for _, old := range superseded {
		old.Close()
	}
	pd.conn, pd.err = c, err
	close(pd.done)
}

// watch forgets a connection once its session ends (the server closed it
// or the network dropped), so the next get reconnects.
func (p *Pool) watch(key poolKey, c *Conn) {
	c.session.Wait()
	p.mu.Lock()
	if p.conns[key] == c {
		delete(p.conns, key)
	}
	p.mu.Unlock()
}

// forget closes and forgets key's connection if it is still c.
func (p *Pool) forget(key poolKey, c *Conn) {
	p.mu.Lock()
	if p.conns[key] == c {
		delete(p.conns, key)
	}
	p.mu.Unlock()
	c.Close()
}

// drop closes every connection of a registration and clears its cooldown:
// used when it is disabled, deleted or edited.
func (p *Pool) drop(id string) {
	p.mu.Lock()
	if p.gens == nil {
		p.gens = map[string]uint64{}
	}
	p.gens[id]++
	closed := p.dropLocked(id)
	delete(p.failed, id)
	p.mu.Unlock()
	for _, c := range closed {
		c.Close()
	}
}

// retire closes, without a further request to its server, the connection
// key's registration has under another network mode (same URL and token):
// its organisation's mode changed, so the session must neither be reused
// nor speak to a destination the new mode may forbid. A connection made
// with another URL or token is left to be replaced by the next connect.
func (p *Pool) retire(key poolKey) {
	var old []*Conn
	p.mu.Lock()
	for _, m := range [...]netguard.Mode{netguard.Public, netguard.SelfHosted} {
		k := key
		k.mode = m
		if c, ok := p.conns[k]; ok && m != key.mode {
			delete(p.conns, k)
			old = append(old, c)
		}
	}
	p.mu.Unlock()
	for _, c := range old {
		c.abandon()
		c.Close()
	}
}

func (p *Pool) dropLocked(id string) []*Conn {
	var closed []*Conn
	for k, c := range p.conns {
		if k.id == id {
			delete(p.conns, k)
			closed = append(closed, c)
		}
	}
	return closed
}

// sweep closes connections idle for longer than the idle limit and returns
// how many it closed.
func (p *Pool) sweep() int {
	cutoff := p.now().Add(-p.idle)
	p.mu.Lock()
	var closed []*Conn
	for k, c := range p.conns {
		if c.idleSince().Before(cutoff) {
			delete(p.conns, k)
			closed = append(closed, c)
		}
	}
	p.mu.Unlock()
	for _, c := range closed {
		c.Close()
	}
	return len(closed)
}

// closeAll closes every connection.
func (p *Pool) closeAll() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = map[poolKey]*Conn{}
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// live returns how many connections are open.
func (p *Pool) live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}
