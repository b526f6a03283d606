package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// agentCases checks the Agents repository.
func agentCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testAgentRoundTrip},
		{"Replace", testAgentReplace},
		{"NotFound", testAgentNotFound},
		{"ListOrderAndScope", testAgentList},
		{"Delete", testAgentDelete},
	}
}

// agentYAML is a definition as an admin might author it: comments, a CRLF
// line, a tab, non-ASCII text and trailing blanks, all of which must come
// back byte for byte.
const agentYAML = "# Support agent «ß»\r\nname: support\nmodel: anthropic:claude\n" +
	"instructions: |\n  Answer in the user's language.\t😀\n  Be brief.   \n\n"

// newAgent returns an agent named name in org with every field set.
func (f *fixture) newAgent(org, name string) store.StoredAgent {
	return store.StoredAgent{
		OrgID:      f.id(org),
		Name:       name,
		Definition: []byte(strings.Replace(agentYAML, "support", name, 1)),
		CreatedAt:  at(10),
		UpdatedAt:  at(20),
	}
}

// putAgents stores every agent, failing the test on error.
func (f *fixture) putAgents(t *testing.T, as ...store.StoredAgent) {
	t.Helper()
	for _, a := range as {
		if err := f.PutAgent(t.Context(), a); err != nil {
			t.Fatalf("PutAgent %s in %s: %v", a.Name, a.OrgID, err)
		}
	}
}

// getAgent returns GetAgent's answer, failing the test on error.
func (f *fixture) getAgent(t *testing.T, org, name string) store.StoredAgent {
	t.Helper()
	got, err := f.GetAgent(t.Context(), org, name)
	if err != nil {
		t.Fatalf("GetAgent %s: %v", name, err)
	}
	return got
}

// listAgents returns ListAgents' answer, failing the test on error.
func (f *fixture) listAgents(t *testing.T, org string) []store.StoredAgent {
	t.Helper()
	got, err := f.ListAgents(t.Context(), org)
	if err != nil {
		t.Fatalf("ListAgents: %v", err)
	}
	return got
}

// wantAgents fails unless got is want, in order; nil and empty lists are
// equal.
func wantAgents(t *testing.T, what string, want, got []store.StoredAgent) {
	t.Helper()
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

func testAgentRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.StoredAgent)
	}{
		{"AllFields", func(*store.StoredAgent) {}},
		{"UnicodeName", func(a *store.StoredAgent) { a.Name = "Hilfe «ß» 'q\"🙂" }},
		{"ZeroFields", func(a *store.StoredAgent) { *a = store.StoredAgent{OrgID: a.OrgID, Name: a.Name} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newAgent("org", "agent-"+tc.name)
			tc.edit(&want)
			f.putAgents(t, want)
			got := f.getAgent(t, want.OrgID, want.Name)
			if d := diff(want, got); d != "" {
				t.Errorf("GetAgent mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "CreatedAt, UpdatedAt", got.CreatedAt, got.UpdatedAt)
			list := f.listAgents(t, want.OrgID)
			i := slices.IndexFunc(list, func(a store.StoredAgent) bool { return a.Name == want.Name })
			if i < 0 {
				t.Fatalf("ListAgents lacks %q", want.Name)
			}
			if d := diff(want, list[i]); d != "" {
				t.Errorf("ListAgents entry mismatch (-want +got):\n%s", d)
			}
		})
	}
}

// testAgentReplace puts an agent again in turn and checks that each put
// replaces the definition and UpdatedAt, keeps the first CreatedAt
// whatever the put holds, adds no second entry, and leaves the agent of
// the same name in another organisation alone.
func testAgentReplace(t *testing.T, f *fixture) {
	want, theirs := f.newAgent("org", "support"), f.newAgent("other-org", "support")
	f.putAgents(t, want, theirs)
	caller := []byte("name: support\n") // the last put's, changed after it
	steps := []struct {
		name string
		def  []byte
	}{
		{"NewModel", []byte("name: support\nmodel: openai:gpt\n")},
		{"Same", []byte("name: support\nmodel: openai:gpt\n")},
		{"Shorter", caller},
	}
	for i, st := range steps {
		put := want
		put.Definition, put.CreatedAt, put.UpdatedAt = st.def, at(50+i), at(30+i)
		f.putAgents(t, put)
		want.Definition, want.UpdatedAt = slices.Clone(st.def), at(30+i)
		wantAgents(t, st.name+": ListAgents after PutAgent", []store.StoredAgent{want},
			f.listAgents(t, want.OrgID))
	}
	caller[0] = 'X' // the store must have kept its own copy
	if d := diff(want, f.getAgent(t, want.OrgID, want.Name)); d != "" {
		t.Errorf("GetAgent after replacing (-want +got):\n%s", d)
	}
	if d := diff(theirs, f.getAgent(t, theirs.OrgID, theirs.Name)); d != "" {
		t.Errorf("the other organisation's agent changed (-want +got):\n%s", d)
	}
}

// testAgentNotFound checks that Get and Delete find an agent only by its
// name in its own organisation, answer ErrNotFound otherwise, and change
// nothing when they do.
func testAgentNotFound(t *testing.T, f *fixture) {
	mine, theirs := f.newAgent("org", "support"), f.newAgent("other-org", "sales")
	f.putAgents(t, mine, theirs)
	tests := []struct{ name, org, agent string }{
		{"MissingName", mine.OrgID, "missing"},
		{"NameOfOtherOrg", mine.OrgID, theirs.Name},
		{"OtherOrg", theirs.OrgID, mine.Name},
		{"UnknownOrg", f.id("unknown-org"), mine.Name},
		{"EmptyOrg", "", mine.Name},
		{"CaseFolded", mine.OrgID, strings.ToUpper(mine.Name)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.GetAgent(t.Context(), tc.org, tc.agent)
			wantNotFound(t, "GetAgent", err)
			if d := diff(store.StoredAgent{}, got); d != "" {
				t.Errorf("GetAgent revealed a record (-want +got):\n%s", d)
			}
			wantNotFound(t, "DeleteAgent", f.DeleteAgent(t.Context(), tc.org, tc.agent))
		})
	}
	wantAgents(t, "agents after calls answered ErrNotFound", []store.StoredAgent{mine, theirs},
		append(f.listAgents(t, mine.OrgID), f.listAgents(t, theirs.OrgID)...))
}

// testAgentList puts agents out of name order in two organisations and
// checks that each list is by name, byte by byte, and holds only its
// organisation's agents.
func testAgentList(t *testing.T, f *fixture) {
	var mine []store.StoredAgent
	for _, name := range []string{"support", "Zeta", "analyst", "ärger", "analyst-2"} {
		mine = append(mine, f.newAgent("org", name))
	}
	theirs := f.newAgent("other-org", "aaa")
	f.putAgents(t, append(mine[:2:2], theirs)...)
	f.putAgents(t, mine[2:]...)
	slices.SortFunc(mine, func(a, b store.StoredAgent) int { return strings.Compare(a.Name, b.Name) })
	tests := []struct {
		name string
		org  string
		want []store.StoredAgent
	}{
		{"Mine", f.id("org"), mine},
		{"OtherOrg", theirs.OrgID, []store.StoredAgent{theirs}},
		{"UnknownOrg", f.id("unknown-org"), nil},
		{"EmptyOrg", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantAgents(t, "ListAgents", tc.want, f.listAgents(t, tc.org))
		})
	}
}

// testAgentDelete checks that a deleted agent is gone from its
// organisation alone, and that putting it again creates it anew.
func testAgentDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	a, b := f.newAgent("org", "a"), f.newAgent("org", "b")
	theirs := f.newAgent("other-org", "a")
	f.putAgents(t, a, b, theirs)
	if err := f.DeleteAgent(ctx, a.OrgID, a.Name); err != nil {
		t.Fatalf("DeleteAgent: %v", err)
	}
	_, err := f.GetAgent(ctx, a.OrgID, a.Name)
	wantNotFound(t, "GetAgent after delete", err)
	wantNotFound(t, "second DeleteAgent", f.DeleteAgent(ctx, a.OrgID, a.Name))
	wantAgents(t, "ListAgents after delete", []store.StoredAgent{b}, f.listAgents(t, a.OrgID))
	if d := diff(theirs, f.getAgent(t, theirs.OrgID, theirs.Name)); d != "" {
		t.Errorf("delete changed the other organisation's agent (-want +got):\n%s", d)
	}
	again := a
	again.CreatedAt, again.UpdatedAt = at(40), at(41)
	f.putAgents(t, again)
	if d := diff(again, f.getAgent(t, a.OrgID, a.Name)); d != "" {
		t.Errorf("GetAgent of an agent put again after delete (-want +got):\n%s", d)
	}
}
