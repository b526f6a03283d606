package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks the MCPServers methods that see sealed tokens in every
// organisation. A shared store holds other subtests' servers too, so the
// checks only ever change their own organisation's tokens, and compare
// counts before and after.

// countTokens returns CountMCPTokens' answer, failing the test on error.
func (f *fixture) countTokens(t *testing.T) int {
	t.Helper()
	n, err := f.CountMCPTokens(t.Context())
	if err != nil {
		t.Fatalf("CountMCPTokens: %v", err)
	}
	return n
}

// testMCPCountTokens runs alone: it counts the servers with a token in
// every organisation, before and after adding and deleting its own.
func testMCPCountTokens(t *testing.T, f *fixture) {
	before := f.countTokens(t)
	none := f.newMCPServer("org", "none")
	none.Token = ""
	f.createMCP(t, f.newMCPServer("org", "a"), none, f.newMCPServer("other-org", "b"))
	if got, want := f.countTokens(t), before+2; got != want {
		t.Errorf("CountMCPTokens after adding 2 servers with a token and 1 without = %d, want %d", got, want)
	}
	if err := f.DeleteMCPServer(t.Context(), f.id("org"), "a"); err != nil {
		t.Fatalf("DeleteMCPServer: %v", err)
	}
	if got, want := f.countTokens(t), before+1; got != want {
		t.Errorf("CountMCPTokens after deleting one = %d, want %d", got, want)
	}
}

// rewrapRecorder is a rewrap function that changes the tokens of one
// organisation's servers as change says, hands back every other token
// unchanged, and records which servers it was given.
type rewrapRecorder struct {
	org    string
	change func(s store.MCPServer) (string, error)

	mu   sync.Mutex // a store may rewrap from several goroutines
	seen map[string]store.MCPServer
}

// rewrap is the function given to RewrapMCPTokens.
func (r *rewrapRecorder) rewrap(s store.MCPServer) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]store.MCPServer{}
	}
	r.seen[s.OrgID+" "+s.Name] = s
	if s.OrgID != r.org {
		return s.Token, nil
	}
	return r.change(s)
}

// testMCPRewrap rewraps two of three tokens in one organisation and
// checks the count, that rewrap saw every server holding a token, in
// every organisation, as stored, and that only tokens changed.
func testMCPRewrap(t *testing.T, f *fixture) {
	a, b, c := f.newMCPServer("org", "a"), f.newMCPServer("org", "b"), f.newMCPServer("org", "c")
	none := f.newMCPServer("org", "none")
	none.Token = ""
	theirs := f.newMCPServer("other-org", "a")
	f.createMCP(t, a, b, c, none, theirs)
	r := &rewrapRecorder{org: a.OrgID, change: func(s store.MCPServer) (string, error) {
		if s.Name == "c" {
			return s.Token, nil
		}
		return "v2." + s.Token, nil
	}}
	n, err := f.RewrapMCPTokens(t.Context(), r.rewrap)
	if n != 2 || err != nil {
		t.Errorf("RewrapMCPTokens = %d, %v; want 2, nil", n, err)
	}
	for _, s := range []store.MCPServer{a, b, c, theirs} {
		if d := mcpDiff(s, r.seen[s.OrgID+" "+s.Name]); d != "" {
			t.Errorf("rewrap was given %s in %s (-stored +given):\n%s", s.Name, s.OrgID, d)
		}
	}
	if _, ok := r.seen[none.OrgID+" "+none.Name]; ok {
		t.Errorf("rewrap was given a server without a token")
	}
	a.Token, b.Token = "v2."+a.Token, "v2."+b.Token
	wantServers(t, "ListMCPServers after RewrapMCPTokens", []store.MCPServer{a, b, c, none},
		f.listMCP(t, a.OrgID))
	wantServers(t, "the other organisation's servers", []store.MCPServer{theirs}, f.listMCP(t, theirs.OrgID))
}

// testMCPRewrapFails fails rewrap for one server of three and checks that
// its error comes back and no token changed.
func testMCPRewrapFails(t *testing.T, f *fixture) {
	errKey := errors.New("key k1 unavailable")
	a, b, c := f.newMCPServer("org", "a"), f.newMCPServer("org", "b"), f.newMCPServer("org", "c")
	f.createMCP(t, a, b, c)
	r := &rewrapRecorder{org: a.OrgID, change: func(s store.MCPServer) (string, error) {
		if s.Name == "b" {
			return "", errKey
		}
		return "v2." + s.Token, nil
	}}
	n, err := f.RewrapMCPTokens(t.Context(), r.rewrap)
	if n != 0 || !errors.Is(err, errKey) {
		t.Errorf("RewrapMCPTokens = %d, %v; want 0 and rewrap's error", n, err)
	}
	wantServers(t, "ListMCPServers after a failed RewrapMCPTokens", []store.MCPServer{a, b, c},
		f.listMCP(t, a.OrgID))
}
