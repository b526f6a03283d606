package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quiverhq/quiver/netguard"
)

// poolKey identifies a connection: the registration and what it connects
// with, so an edited URL or token, or a changed network mode of its
// organisation, never reuses an old session.
type poolKey struct {
	id, url, sealedToken string
	mode                 netguard.Mode
}

// pool keeps one live connection per registration, connects lazily, and
// quarantines a server after a failed connect. It is safe for concurrent
// use.
type pool struct {
	dial     func(ctx context.Context, key poolKey, t Target) (*Conn, error)
	now      func() time.Time
	cooldown time.Duration
	idle     time.Duration

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

func newPool(dial func(context.Context, poolKey, Target) (*Conn, error), now func() time.Time, cooldown, idle time.Duration) *pool {
	return &pool{
		dial: dial, now: now, cooldown: cooldown, idle: idle,
		conns: map[poolKey]*Conn{}, pending: map[poolKey]*pendingDial{}, failed: map[string]failure{},
	}
}

// get returns the live connection for key, connecting when there is none.
// Concurrent gets for one key share one connect. A registration in its
// cooldown fails at once with a *cooldownError; redact turns a connect
// error into the message the cooldown repeats.
func (p *pool) get(ctx context.Context, key poolKey, t Target, redact func(error) string) (*Conn, error) {
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
func (p *pool) connect(key poolKey, t Target, pd *pendingDial, redact func(error) string) {
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
func (p *pool) watch(key poolKey, c *Conn) {
	c.session.Wait()
	p.mu.Lock()
	if p.conns[key] == c {
		delete(p.conns, key)
	}
	p.mu.Unlock()
}

// forget closes and forgets key's connection if it is still c.
func (p *pool) forget(key poolKey, c *Conn) {
	p.mu.Lock()
	if p.conns[key] == c {
		delete(p.conns, key)
	}
	p.mu.Unlock()
	c.Close()
}

// drop closes every connection of a registration and clears its cooldown:
// used when it is disabled, deleted or edited.
func (p *pool) drop(id string) {
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
func (p *pool) retire(key poolKey) {
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

func (p *pool) dropLocked(id string) []*Conn {
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
func (p *pool) sweep() int {
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
func (p *pool) closeAll() {
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
func (p *pool) live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}
