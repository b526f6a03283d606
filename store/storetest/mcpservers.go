package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// mcpServerCases checks the MCPServers repository.
func mcpServerCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testMCPRoundTrip},
		{"ListOrderAndScope", testMCPList},
		{"NotFound", testMCPNotFound},
		{"NameTaken", testMCPNameTaken},
		{"FamilyOnCreate", testMCPFamilyOnCreate},
		{"SetEnabled", testMCPSetEnabled},
		{"SlotLimit", testMCPSlotLimit},
		{"Delete", testMCPDelete},
		{"Tools", testMCPTools},
		{"ToolsUnknownServer", testMCPToolsUnknownServer},
		{"Concurrent", testMCPConcurrent},
		{"ConcurrentEnable", testMCPConcurrentEnable},
		{"Rewrap", testMCPRewrap},
		{"RewrapFails", testMCPRewrapFails},
	}
}

// mcpServerAloneCases are the MCPServers checks that count tokens in
// every organisation, so must run while nothing else writes.
func mcpServerAloneCases() []suiteCase {
	return []suiteCase{
		{"CountTokens", testMCPCountTokens},
	}
}

// mcpTemplate returns an enabled general server named name with every
// field set but OrgID, and name as a local ID that mcpIn makes unique. Its
// tools are out of name order, so that a store sorting them is caught.
func mcpTemplate(name string) store.MCPServer {
	return store.MCPServer{
		ID:           name,
		Name:         name,
		URL:          "https://mcp.example.com/" + name + "?lang=ß",
		Token:        "v1.k1." + name + ".sealed",
		Type:         store.MCPGeneral,
		Enabled:      true,
		Tools:        []string{"search", "fetch", "admin.reset"},
		CreatedAt:    at(10),
		UpdatedAt:    at(20),
		DiscoveredAt: at(30),
	}
}

// typedTemplate is mcpTemplate with type typ, enabled or not.
func typedTemplate(name, typ string, enabled bool) store.MCPServer {
	s := mcpTemplate(name)
	s.Type, s.Enabled = typ, enabled
	return s
}

// mcpIn returns template s placed in the organisation orgID, its local ID
// made unique to that organisation (and so to the run and subtest).
func mcpIn(s store.MCPServer, orgID string) store.MCPServer {
	s.OrgID, s.ID = orgID, orgID+"/mcp/"+s.ID
	return s
}

// newMCPServer returns mcpTemplate(name) in org.
func (f *fixture) newMCPServer(org, name string) store.MCPServer {
	return mcpIn(mcpTemplate(name), f.id(org))
}

// typedMCPServer returns typedTemplate(name, typ, enabled) in org.
func (f *fixture) typedMCPServer(org, name, typ string, enabled bool) store.MCPServer {
	return mcpIn(typedTemplate(name, typ, enabled), f.id(org))
}

// createMCP creates every server with no limit, failing the test on error.
func (f *fixture) createMCP(t *testing.T, srvs ...store.MCPServer) {
	t.Helper()
	for _, s := range srvs {
		if err := f.CreateMCPServer(t.Context(), s, 0); err != nil {
			t.Fatalf("CreateMCPServer %s in %s: %v", s.Name, s.OrgID, err)
		}
	}
}

// getMCP returns GetMCPServer's answer, failing the test on error.
func (f *fixture) getMCP(t *testing.T, org, name string) store.MCPServer {
	t.Helper()
	got, err := f.GetMCPServer(t.Context(), org, name)
	if err != nil {
		t.Fatalf("GetMCPServer %s: %v", name, err)
	}
	return got
}

// listMCP returns ListMCPServers' answer, failing the test on error.
func (f *fixture) listMCP(t *testing.T, org string) []store.MCPServer {
	t.Helper()
	got, err := f.ListMCPServers(t.Context(), org)
	if err != nil {
		t.Fatalf("ListMCPServers: %v", err)
	}
	return got
}

// listEnabledMCP returns ListEnabledMCPServers' answer, failing the test
// on error.
func (f *fixture) listEnabledMCP(t *testing.T, org string) []store.MCPServer {
	t.Helper()
	got, err := f.ListEnabledMCPServers(t.Context(), org)
	if err != nil {
		t.Fatalf("ListEnabledMCPServers: %v", err)
	}
	return got
}

// mcpDiff compares servers strictly: unlike diff, a nil Tools (never
// discovered) differs from an empty one (none discovered).
func mcpDiff(want, got any) string { return cmp.Diff(want, got) }

// wantServers fails unless got is want, in order; nil and empty lists are
// equal.
func wantServers(t *testing.T, what string, want, got []store.MCPServer) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if d := mcpDiff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// sortedByName returns srvs sorted by name, the order lists promise.
func sortedByName(srvs ...store.MCPServer) []store.MCPServer {
	return slices.SortedFunc(slices.Values(srvs), func(a, b store.MCPServer) int {
		return strings.Compare(a.Name, b.Name)
	})
}

// wantErrIs fails unless err wraps target, or is nil when target is.
func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) { // errors.Is(err, nil) is err == nil
		t.Errorf("%s: err = %v, want %v", what, err, target)
	}
}

func testMCPRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.MCPServer)
	}{
		{"AllFields", func(*store.MCPServer) {}},
		{"NeverDiscovered", func(s *store.MCPServer) { s.Tools, s.DiscoveredAt = nil, time.Time{} }},
		{"NoneDiscovered", func(s *store.MCPServer) { s.Tools = []string{} }},
		{"NoToken", func(s *store.MCPServer) { s.Token = "" }},
		{"WebSearch", func(s *store.MCPServer) { s.Type = store.MCPWebSearch }},
		{"DisabledURLFetcher", func(s *store.MCPServer) { s.Type, s.Enabled = store.MCPURLFetcher, false }},
		{"Unicode", func(s *store.MCPServer) { s.Name, s.URL = "Suche «ß» 'q\"\n🙂", "https://例え.jp/mcp?q='x'" }},
		{"ZeroFields", func(s *store.MCPServer) { *s = store.MCPServer{ID: s.ID, OrgID: s.OrgID, Name: s.Name} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newMCPServer("org", tc.name)
			tc.edit(&want)
			f.createMCP(t, want)
			got := f.getMCP(t, want.OrgID, want.Name)
			if d := mcpDiff(want, got); d != "" {
				t.Errorf("GetMCPServer mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "CreatedAt, UpdatedAt, DiscoveredAt", got.CreatedAt, got.UpdatedAt, got.DiscoveredAt)
			list := f.listMCP(t, want.OrgID)
			i := slices.IndexFunc(list, func(s store.MCPServer) bool { return s.Name == want.Name })
			if i < 0 {
				t.Fatalf("ListMCPServers lacks %q", want.Name)
			}
			if d := mcpDiff(want, list[i]); d != "" {
				t.Errorf("ListMCPServers entry mismatch (-want +got):\n%s", d)
			}
		})
	}
}

// testMCPList creates servers out of name order in two organisations and
// checks that each list is by name and holds only its organisation's
// servers, the enabled list only the enabled ones.
func testMCPList(t *testing.T, f *fixture) {
	mid, alpha := f.newMCPServer("org", "mid"), f.newMCPServer("org", "alpha")
	beta := f.typedMCPServer("org", "beta", store.MCPGeneral, false)
	zeta := f.typedMCPServer("org", "zeta", store.MCPWebSearch, false)
	theirs := f.newMCPServer("other-org", "aaa")
	f.createMCP(t, mid, zeta, theirs, alpha, beta)
	org, unknown := mid.OrgID, f.id("unknown-org")
	tests := []struct {
		name string
		list func(*testing.T, string) []store.MCPServer
		org  string
		want []store.MCPServer
	}{
		{"All", f.listMCP, org, []store.MCPServer{alpha, beta, mid, zeta}},
		{"Enabled", f.listEnabledMCP, org, []store.MCPServer{alpha, mid}},
		{"OtherOrg", f.listMCP, theirs.OrgID, []store.MCPServer{theirs}},
		{"OtherOrgEnabled", f.listEnabledMCP, theirs.OrgID, []store.MCPServer{theirs}},
		{"UnknownOrg", f.listMCP, unknown, nil},
		{"UnknownOrgEnabled", f.listEnabledMCP, unknown, nil},
		{"EmptyOrg", f.listMCP, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantServers(t, "list", tc.want, tc.list(t, tc.org))
		})
	}
}

// testMCPNotFound checks that Get, SetEnabled and Delete find a server
// only by its name in its own organisation, answer ErrNotFound otherwise,
// and change nothing when they do.
func testMCPNotFound(t *testing.T, f *fixture) {
	mine := f.newMCPServer("org", "srv")
	theirs := f.newMCPServer("other-org", "theirs")
	f.createMCP(t, mine, theirs)
	tests := []struct{ name, org, srv string }{
		{"MissingName", mine.OrgID, "missing"},
		{"NameOfOtherOrg", mine.OrgID, theirs.Name},
		{"OtherOrg", theirs.OrgID, mine.Name},
		{"UnknownOrg", f.id("unknown-org"), mine.Name},
		{"EmptyOrg", "", mine.Name},
		{"ID", mine.OrgID, mine.ID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.GetMCPServer(t.Context(), tc.org, tc.srv)
			wantNotFound(t, "GetMCPServer", err)
			if d := mcpDiff(store.MCPServer{}, got); d != "" {
				t.Errorf("GetMCPServer revealed a record (-want +got):\n%s", d)
			}
			err = f.SetMCPServerEnabled(t.Context(), tc.org, tc.srv, false, at(50))
			wantNotFound(t, "SetMCPServerEnabled", err)
			wantNotFound(t, "DeleteMCPServer", f.DeleteMCPServer(t.Context(), tc.org, tc.srv))
		})
	}
	for _, s := range []store.MCPServer{mine, theirs} {
		if d := mcpDiff(s, f.getMCP(t, s.OrgID, s.Name)); d != "" {
			t.Errorf("calls answered ErrNotFound changed %s (-want +got):\n%s", s.Name, d)
		}
	}
}

// testMCPDelete checks that a deleted server is gone from its organisation
// alone, and that its name, its slot and its family are free again.
func testMCPDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	a, b := f.newMCPServer("org", "a"), f.typedMCPServer("org", "b", store.MCPWebSearch, true)
	theirs := f.newMCPServer("other-org", "a")
	f.createMCP(t, a, b, theirs)
	org := a.OrgID
	if err := f.DeleteMCPServer(ctx, org, "a"); err != nil {
		t.Fatalf("DeleteMCPServer: %v", err)
	}
	_, err := f.GetMCPServer(ctx, org, "a")
	wantNotFound(t, "GetMCPServer after delete", err)
	wantNotFound(t, "second DeleteMCPServer", f.DeleteMCPServer(ctx, org, "a"))
	if d := mcpDiff(theirs, f.getMCP(t, theirs.OrgID, "a")); d != "" {
		t.Errorf("delete changed the other organisation's server (-want +got):\n%s", d)
	}

	again := a
	again.ID, again.URL = a.ID+"-again", "https://mcp.example.com/again"
	wantErrIs(t, "CreateMCPServer with a deleted server's name", f.CreateMCPServer(ctx, again, 2), nil)
	c := f.newMCPServer("org", "c")
	wantErrIs(t, "CreateMCPServer into two full slots", f.CreateMCPServer(ctx, c, 2), store.ErrSlotsFull)
	if err := f.DeleteMCPServer(ctx, org, "b"); err != nil {
		t.Fatalf("DeleteMCPServer b: %v", err)
	}
	c = f.typedMCPServer("org", "c", store.MCPWebSearch, true)
	wantErrIs(t, "CreateMCPServer into the slot and family b freed", f.CreateMCPServer(ctx, c, 2), nil)
	wantServers(t, "ListMCPServers", []store.MCPServer{again, c}, f.listMCP(t, org))
}

// testMCPTools records a sequence of discoveries and checks which ones
// change the server: only a list that differs in names or order, and
// never nil for empty. An unchanged list leaves DiscoveredAt alone too.
func testMCPTools(t *testing.T, f *fixture) {
	srv := f.newMCPServer("org", "srv")
	srv.Tools, srv.DiscoveredAt = nil, time.Time{}
	f.createMCP(t, srv)
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = fmt.Sprintf("tool_%03d", 99-i)
	}
	steps := []struct {
		name    string
		tools   []string
		changed bool
	}{
		{"FirstFindsNone", []string{}, true},
		{"NoneAgain", []string{}, false},
		{"Found", []string{"b.search", "a.fetch"}, true},
		{"SameAgain", []string{"b.search", "a.fetch"}, false},
		{"Reordered", []string{"a.fetch", "b.search"}, true},
		{"Fewer", []string{"a.fetch"}, true},
		{"NoneAfterSome", []string{}, true},
		{"Hundred", hundred, true},
		{"HundredAgain", hundred, false},
	}
	want := srv
	for i, st := range steps {
		changed, err := f.SetMCPServerTools(t.Context(), srv.OrgID, srv.ID, slices.Clone(st.tools), at(40+i))
		if err != nil || changed != st.changed {
			t.Errorf("%s: SetMCPServerTools = %v, %v; want %v, nil", st.name, changed, err, st.changed)
		}
		if st.changed {
			want.Tools, want.DiscoveredAt = st.tools, at(40+i)
		}
		if d := mcpDiff(want, f.getMCP(t, srv.OrgID, srv.Name)); d != "" {
			t.Errorf("%s: server after SetMCPServerTools (-want +got):\n%s", st.name, d)
		}
	}
}

// testMCPToolsUnknownServer checks that a discovery for a server not in
// the organisation, or deleted meanwhile, is changed=false and no error,
// and writes nothing; and that the tools given at creation count as the
// last discovery.
func testMCPToolsUnknownServer(t *testing.T, f *fixture) {
	ctx := t.Context()
	mine, theirs := f.newMCPServer("org", "srv"), f.newMCPServer("other-org", "srv")
	f.createMCP(t, mine, theirs)
	tests := []struct {
		name, org, id string
		tools         []string
	}{
		{"UnknownID", mine.OrgID, f.id("missing"), []string{"x"}},
		{"OtherOrg", theirs.OrgID, mine.ID, []string{"x"}},
		{"EmptyOrg", "", mine.ID, []string{"x"}},
		{"SameAsCreated", mine.OrgID, mine.ID, slices.Clone(mine.Tools)},
	}
	for _, tc := range tests {
		changed, err := f.SetMCPServerTools(ctx, tc.org, tc.id, tc.tools, at(50))
		if changed || err != nil {
			t.Errorf("%s: SetMCPServerTools = %v, %v; want false, nil", tc.name, changed, err)
		}
	}
	wantServers(t, "servers after unchanged discoveries", []store.MCPServer{mine, theirs},
		append(f.listMCP(t, mine.OrgID), f.listMCP(t, theirs.OrgID)...))
	if err := f.DeleteMCPServer(ctx, mine.OrgID, mine.Name); err != nil {
		t.Fatalf("DeleteMCPServer: %v", err)
	}
	changed, err := f.SetMCPServerTools(ctx, mine.OrgID, mine.ID, []string{"x"}, at(51))
	if changed || err != nil {
		t.Errorf("SetMCPServerTools after delete = %v, %v; want false, nil", changed, err)
	}
	_, err = f.GetMCPServer(ctx, mine.OrgID, mine.Name)
	wantNotFound(t, "GetMCPServer after a discovery of a deleted server", err)
}
