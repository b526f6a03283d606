package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks the MCPServers rules that span rows: a name is unique
// in an organisation, one server per typed family is enabled there, and
// the organisation holds at most its limit of servers.

// createCase is one CreateMCPServer check in an organisation of its own.
// Servers are templates (mcpTemplate), placed by the check.
type createCase struct {
	name string
	// mine and other are created first, without limit, in the case's
	// organisation and in another one.
	mine, other []store.MCPServer
	// cand is then created in the case's organisation with limit.
	cand  store.MCPServer
	limit int
	// want is nil or the sentinel CreateMCPServer must answer.
	want error
}

// runCreateCases runs each case and checks its answer and that the
// organisation then holds mine, plus cand exactly when it was accepted.
func (f *fixture) runCreateCases(t *testing.T, tests []createCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			org := f.id("org-" + tc.name)
			var want []store.MCPServer
			for _, s := range tc.mine {
				want = append(want, mcpIn(s, org))
				f.createMCP(t, want[len(want)-1])
			}
			for _, s := range tc.other {
				f.createMCP(t, mcpIn(s, f.id("other-org-"+tc.name)))
			}
			cand := mcpIn(tc.cand, org)
			err := f.CreateMCPServer(t.Context(), cand, tc.limit)
			wantErrIs(t, "CreateMCPServer", err, tc.want)
			if tc.want == nil {
				want = append(want, cand)
			}
			wantServers(t, "ListMCPServers after CreateMCPServer", sortedByName(want...), f.listMCP(t, org))
		})
	}
}

func testMCPNameTaken(t *testing.T, f *fixture) {
	other := typedTemplate("srv", store.MCPURLFetcher, false)
	other.ID, other.URL, other.Token, other.Tools = "srv-2", "https://elsewhere.example/", "", nil
	second := mcpTemplate("srv")
	second.ID = "srv-2"
	f.runCreateCases(t, []createCase{
		{name: "SameName", mine: []store.MCPServer{mcpTemplate("srv")}, cand: second,
			want: store.ErrNameTaken},
		{name: "SameNameOtherFields", mine: []store.MCPServer{mcpTemplate("srv")}, cand: other,
			want: store.ErrNameTaken},
		{name: "SameNameDisabled", mine: []store.MCPServer{typedTemplate("srv", store.MCPGeneral, false)},
			cand: second, want: store.ErrNameTaken},
		{name: "SameNameInOtherOrg", other: []store.MCPServer{mcpTemplate("srv")}, cand: second},
		{name: "OtherName", mine: []store.MCPServer{mcpTemplate("srv")}, cand: mcpTemplate("srv2")},
	})
}

func testMCPFamilyOnCreate(t *testing.T, f *fixture) {
	ws := func(name string, on bool) store.MCPServer { return typedTemplate(name, store.MCPWebSearch, on) }
	uf := func(name string, on bool) store.MCPServer { return typedTemplate(name, store.MCPURLFetcher, on) }
	general := func(name string) store.MCPServer { return mcpTemplate(name) }
	f.runCreateCases(t, []createCase{
		{name: "WebSearchEnabled", mine: []store.MCPServer{ws("a", true)}, cand: ws("b", true),
			want: store.ErrFamilyInUse},
		{name: "URLFetcherEnabled", mine: []store.MCPServer{uf("a", true)}, cand: uf("b", true),
			want: store.ErrFamilyInUse},
		{name: "CandidateDisabled", mine: []store.MCPServer{ws("a", true)}, cand: ws("b", false)},
		{name: "ExistingDisabled", mine: []store.MCPServer{ws("a", false), ws("b", false)}, cand: ws("c", true)},
		{name: "OtherFamily", mine: []store.MCPServer{ws("a", true)}, cand: uf("b", true)},
		{name: "GeneralNeverConflicts", mine: []store.MCPServer{general("a"), general("b"), ws("c", true)},
			cand: general("d")},
		{name: "OtherOrg", other: []store.MCPServer{ws("a", true)}, cand: ws("b", true)},
	})
}

func testMCPSlotLimit(t *testing.T, f *fixture) {
	three := []store.MCPServer{mcpTemplate("a"), typedTemplate("b", store.MCPGeneral, false), mcpTemplate("c")}
	disabled := []store.MCPServer{
		typedTemplate("a", store.MCPGeneral, false), typedTemplate("b", store.MCPWebSearch, false),
	}
	cand := mcpTemplate("new")
	f.runCreateCases(t, []createCase{
		{name: "Full", mine: three, cand: cand, limit: 3, want: store.ErrSlotsFull},
		{name: "OverFull", mine: three, cand: cand, limit: 2, want: store.ErrSlotsFull},
		{name: "DisabledCount", mine: disabled, cand: cand, limit: 2, want: store.ErrSlotsFull},
		{name: "FullDisabledCandidate", mine: three, cand: typedTemplate("new", store.MCPGeneral, false),
			limit: 3, want: store.ErrSlotsFull},
		{name: "Room", mine: three[:2], cand: cand, limit: 3},
		{name: "Empty", cand: cand, limit: 1},
		{name: "ZeroIsNoLimit", mine: three, cand: cand, limit: 0},
		{name: "NegativeIsNoLimit", mine: three, cand: cand, limit: -1},
		{name: "OtherOrgDoesNotCount", other: three, cand: cand, limit: 1},
	})
}

// testMCPSetEnabled enables and disables servers in turn and checks each
// answer, and after each step every server: a step that succeeds stamps
// UpdatedAt and changes nothing else; one that fails changes nothing.
func testMCPSetEnabled(t *testing.T, f *fixture) {
	srvs := map[string]store.MCPServer{}
	for _, s := range []store.MCPServer{
		f.typedMCPServer("org", "a", store.MCPWebSearch, true),
		f.typedMCPServer("org", "b", store.MCPWebSearch, false),
		f.typedMCPServer("org", "g1", store.MCPGeneral, true),
		f.typedMCPServer("org", "g2", store.MCPGeneral, false),
		f.typedMCPServer("org", "u", store.MCPURLFetcher, false),
	} {
		f.createMCP(t, s)
		srvs[s.Name] = s
	}
	f.createMCP(t, f.typedMCPServer("other-org", "a", store.MCPURLFetcher, true))
	steps := []struct {
		name    string
		srv     string
		enabled bool
		want    error
	}{
		{"EnableSecondWebSearch", "b", true, store.ErrFamilyInUse},
		{"EnableGeneral", "g2", true, nil},
		{"EnableURLFetcher", "u", true, nil},
		{"EnableEnabled", "a", true, nil},
		{"DisableFirst", "a", false, nil},
		{"EnableSecond", "b", true, nil},
		{"EnableFirstAgain", "a", true, store.ErrFamilyInUse},
		{"DisableDisabled", "a", false, nil},
		{"DisableGeneral", "g1", false, nil},
	}
	org := f.id("org")
	for i, st := range steps {
		err := f.SetMCPServerEnabled(t.Context(), org, st.srv, st.enabled, at(40+i))
		wantErrIs(t, fmt.Sprintf("%s: SetMCPServerEnabled(%s, %v)", st.name, st.srv, st.enabled), err, st.want)
		if st.want == nil {
			s := srvs[st.srv]
			s.Enabled, s.UpdatedAt = st.enabled, at(40+i)
			srvs[st.srv] = s
		}
		want := sortedByName(srvs["a"], srvs["b"], srvs["g1"], srvs["g2"], srvs["u"])
		wantServers(t, st.name+": ListMCPServers", want, f.listMCP(t, org))
	}
	wantServers(t, "ListEnabledMCPServers at the end",
		[]store.MCPServer{srvs["b"], srvs["g2"], srvs["u"]}, f.listEnabledMCP(t, org))
}

// testMCPConcurrent creates servers from 8 goroutines at once, each
// allowed alone but not all together, and checks that exactly as many
// succeed as the rule allows and the rest fail with its error.
func testMCPConcurrent(t *testing.T, f *fixture) {
	const writers = 8
	tests := []struct {
		name  string
		srv   func(i int) store.MCPServer // a template
		limit int
		ok    int
		want  error
	}{
		{"OneWebSearch", func(i int) store.MCPServer {
			return typedTemplate(fmt.Sprintf("ws-%d", i), store.MCPWebSearch, true)
		}, 0, 1, store.ErrFamilyInUse},
		{"SlotLimit", func(i int) store.MCPServer {
			return mcpTemplate(fmt.Sprintf("g-%d", i))
		}, 3, 3, store.ErrSlotsFull},
		{"SameName", func(i int) store.MCPServer {
			s := mcpTemplate("same")
			s.ID = fmt.Sprintf("same-%d", i)
			return s
		}, 0, 1, store.ErrNameTaken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			org := f.id("org-" + tc.name)
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() { errs[i] = f.CreateMCPServer(t.Context(), mcpIn(tc.srv(i), org), tc.limit) })
			}
			wg.Wait()
			ok := 0
			for i, err := range errs {
				if err == nil {
					ok++
				} else if !errors.Is(err, tc.want) {
					t.Errorf("writer %d: err = %v, want nil or %v", i, err, tc.want)
				}
			}
			if ok != tc.ok {
				t.Errorf("%d of %d creates succeeded, want %d", ok, writers, tc.ok)
			}
			if n := len(f.listMCP(t, org)); n != tc.ok {
				t.Errorf("%d servers stored, want %d", n, tc.ok)
			}
		})
	}
}
