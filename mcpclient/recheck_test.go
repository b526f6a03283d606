package mcpclient

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// countedServers counts the registration reads of calls' re-checks.
type countedServers struct {
	store.MCPServers
	gets *atomic.Int64
}

func (c countedServers) GetMCPServer(ctx context.Context, orgID, name string) (store.MCPServer, error) {
	c.gets.Add(1)
	return c.MCPServers.GetMCPServer(ctx, orgID, name)
}

// TestRecheckCache: the calls of a turn share one registration read; a
// server disabled or removed through this process is refused on the very
// next call; one disabled behind this process's back (another replica,
// here the store written directly) is refused once RecheckTTL has passed,
// not later.
func TestRecheckCache(t *testing.T) {
	var gets atomic.Int64
	e := newEnv(t, func(c *testConfig) {
		c.Registrations.Store = countedServers{c.Registrations.Store, &gets}
	})
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/echo"))
	call := func() error {
		t.Helper()
		_, err := run(t, ts, "a__echo", `{"text":"hi"}`)
		return err
	}

	before := gets.Load()
	for i := range 3 {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := gets.Load() - before; got != 1 {
		t.Errorf("3 calls read the registration %d times, want once", got)
	}

	if err := e.regs.SetEnabled(context.Background(), org, "a", false); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "the call after a disable", errString(call()), "the MCP server a is disabled")
	if err := e.regs.SetEnabled(context.Background(), org, "a", true); err != nil {
		t.Fatal(err)
	}
	if err := call(); err != nil {
		t.Fatalf("the call after enabling again: %v", err)
	}
	if err := e.regs.Remove(context.Background(), org, "a", true); err != nil {
		t.Fatal(err)
	}
	wantContains(t, "the call after a removal", errString(call()), "the MCP server a was removed")

	e.add(Registration{Name: "b", URL: p.URL})
	ts = builtins().With(e.overlay(builtins()).Overlay).Select(facts("b/echo"))
	if _, err := run(t, ts, "b__echo", `{"text":"hi"}`); err != nil {
		t.Fatalf("call on b: %v", err)
	}
	if err := e.st.SetMCPServerEnabled(context.Background(), org, "b", false, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(DefaultRecheckTTL)
	_, err := run(t, ts, "b__echo", `{"text":"hi"}`)
	wantContains(t, "a call RecheckTTL after another replica's disable", errString(err), "the MCP server b is disabled")
}

// TestRecheckCacheBounded: the cache never holds more than
// maxRecheckEntries registrations.
func TestRecheckCacheBounded(t *testing.T) {
	c := recheckCache{ttl: DefaultRecheckTTL}
	for i := range maxRecheckEntries + 10 {
		_, gen, _ := c.get(org, fmt.Sprint("s", i), t0)
		c.put(org, fmt.Sprint("s", i), recheckEntry{readAt: t0}, gen)
	}
	if n := len(c.entries); n > maxRecheckEntries {
		t.Errorf("%d entries, want at most %d", n, maxRecheckEntries)
	}
}

// TestRecheckTTLOff: a negative RecheckTTL reads the registration for
// every call, so a change made behind this process's back (another
// replica's) is seen by the next call.
func TestRecheckTTLOff(t *testing.T) {
	var gets atomic.Int64
	e := newEnv(t, func(c *testConfig) {
		c.Registrations.Store = countedServers{c.Registrations.Store, &gets}
		c.Registrations.RecheckTTL = -1
	})
	p := startPeer(t, "p", peerOpts{})
	addEcho(p.srv, "echo")
	e.add(Registration{Name: "a", URL: p.URL})
	ts := builtins().With(e.overlay(builtins()).Overlay).Select(facts("a/echo"))
	before := gets.Load()
	for i := range 3 {
		if _, err := run(t, ts, "a__echo", `{"text":"hi"}`); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := gets.Load() - before; got != 3 {
		t.Errorf("3 calls read the registration %d times, want 3", got)
	}
}
