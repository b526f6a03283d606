package storetest

import (
	"testing"

	"github.com/quiverhq/quiver/store"
)

// turnCases checks the Turns repository.
func turnCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testTurnRoundTrip},
		{"Replace", testTurnReplace},
		{"NotFound", testTurnNotFound},
		{"SameIDInOtherOrg", testTurnSameIDInOtherOrg},
	}
}

// newTurn returns a turn with every field set.
func (f *fixture) newTurn(org, id string) store.Turn {
	return store.Turn{
		ID:             f.id(id),
		OrgID:          f.id(org),
		UserID:         f.id("user"),
		ConversationID: f.id("conv"),
		Agent:          "assistant",
		Timezone:       "Asia/Kolkata",
		Payer:          "org",
		Tools:          []string{"web.search", "calendar.create", "files.read"},
		Status:         "running",
		StartedAt:      at(30),
	}
}

func testTurnRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Turn)
	}{
		{"AllFields", func(*store.Turn) {}},
		{"EmptyTimezone", func(tu *store.Turn) { tu.Timezone = "" }},
		{"ToolsOrderKept", func(tu *store.Turn) {
			tu.Tools = []string{"zeta", "alpha", "mid.b", "mid.a", "Émoji-🙂"}
		}},
		{"NoTools", func(tu *store.Turn) { tu.Tools = nil }},
		{"ZeroFields", func(tu *store.Turn) { *tu = store.Turn{ID: tu.ID, OrgID: tu.OrgID} }},
		{"Unicode", func(tu *store.Turn) { tu.Agent, tu.Payer = "agent «ß»", "naïve 'quote\"" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newTurn("org", tc.name)
			tc.edit(&want)
			if err := f.PutTurn(t.Context(), want); err != nil {
				t.Fatalf("PutTurn: %v", err)
			}
			got, err := f.GetTurn(t.Context(), want.OrgID, want.ID)
			if err != nil {
				t.Fatalf("GetTurn: %v", err)
			}
			if d := diff(want, got); d != "" {
				t.Errorf("GetTurn mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "StartedAt", got.StartedAt)
		})
	}
}

func testTurnReplace(t *testing.T, f *fixture) {
	first := f.newTurn("org", "turn")
	if err := f.PutTurn(t.Context(), first); err != nil {
		t.Fatalf("PutTurn first: %v", err)
	}
	second := first
	second.Status = "paused"
	second.Tools = []string{"files.read"}
	second.Timezone = ""
	second.StartedAt = at(31)
	if err := f.PutTurn(t.Context(), second); err != nil {
		t.Fatalf("PutTurn second: %v", err)
	}
	got, err := f.GetTurn(t.Context(), first.OrgID, first.ID)
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if d := diff(second, got); d != "" {
		t.Errorf("GetTurn after replace (-want +got):\n%s", d)
	}
}

func testTurnNotFound(t *testing.T, f *fixture) {
	tu := f.newTurn("org", "turn")
	if err := f.PutTurn(t.Context(), tu); err != nil {
		t.Fatalf("PutTurn: %v", err)
	}
	tests := []struct{ name, org, id string }{
		{"MissingID", tu.OrgID, f.id("missing")},
		{"OtherOrg", f.id("other-org"), tu.ID},
		{"EmptyOrg", "", tu.ID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.GetTurn(t.Context(), tc.org, tc.id)
			wantNotFound(t, "GetTurn", err)
			if d := diff(store.Turn{}, got); d != "" {
				t.Errorf("GetTurn revealed a record (-want +got):\n%s", d)
			}
		})
	}
}

// testTurnSameIDInOtherOrg checks that a turn put in one organisation
// never changes the turn with the same ID in another. Whether the second
// put succeeds is the store's choice; the first turn must survive it.
func testTurnSameIDInOtherOrg(t *testing.T, f *fixture) {
	mine := f.newTurn("org", "turn")
	if err := f.PutTurn(t.Context(), mine); err != nil {
		t.Fatalf("PutTurn mine: %v", err)
	}
	theirs := mine
	theirs.OrgID, theirs.Status, theirs.Tools = f.id("other-org"), "done", nil
	putErr := f.PutTurn(t.Context(), theirs)
	got, err := f.GetTurn(t.Context(), mine.OrgID, mine.ID)
	if err != nil {
		t.Fatalf("GetTurn mine: %v", err)
	}
	if d := diff(mine, got); d != "" {
		t.Errorf("other org's PutTurn changed this org's turn (-want +got):\n%s", d)
	}
	got, err = f.GetTurn(t.Context(), theirs.OrgID, theirs.ID)
	switch {
	case putErr != nil:
		wantNotFound(t, "GetTurn after refused put", err)
	case err != nil:
		t.Errorf("GetTurn theirs after accepted put: %v", err)
	default:
		if d := diff(theirs, got); d != "" {
			t.Errorf("GetTurn theirs (-want +got):\n%s", d)
		}
	}
}
