package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

// turnCases checks the Turns repository.
func turnCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testTurnRoundTrip},
		{"Replace", testTurnReplace},
		{"NotFound", testTurnNotFound},
		{"SameIDInOtherOrg", testTurnSameIDInOtherOrg},
		{"Interrupt", testTurnInterrupt},
		{"ExclusionsNilOrEmpty", testTurnExclusionsNilOrEmpty},
		{"ExclusionsBounded", testTurnExclusionsBounded},
		{"DeclaredNilOrKept", testTurnDeclaredNilOrKept},
	}
}

// turnAloneCases interrupt turns in every organisation before a cutoff
// that the parallel testTurnInterrupt's reaches, so they run alone.
func turnAloneCases() []suiteCase {
	return []suiteCase{
		{"InterruptSkipsRuns", testTurnInterruptSkipsRuns},
	}
}

// testTurnInterruptSkipsRuns: of two running turns started before the
// cutoff, InterruptTurns interrupts the one that is no conversation's run
// and leaves the one whose run is claimed (another replica's, live or
// not: the lease reaper's). The turns start in 2000, before every other
// check's; a store shared with earlier runs may hold more such orphans,
// so the count is checked as at least one.
func testTurnInterruptSkipsRuns(t *testing.T, f *fixture) {
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	cutoff, now := old.Add(time.Hour), old.Add(2*time.Hour)
	run := f.newRun("org", "conv-held", "turn-held", "replica", old)
	held := f.putRunTurn(t, run)
	f.claimRun(t, run)
	orphan := f.putRunTurn(t, f.newRun("org", "conv-orphan", "turn-orphan", "replica", old))
	n, err := f.InterruptTurns(t.Context(), cutoff, now)
	if err != nil {
		t.Fatalf("InterruptTurns: %v", err)
	}
	if n < 1 {
		t.Errorf("InterruptTurns reported %d turns, want at least the orphan", n)
	}
	f.wantTurnStatus(t, "the turn with no run", orphan, store.TurnInterrupted, now)
	f.wantTurnStatus(t, "the turn with a run", held, store.TurnRunning, time.Time{})
	f.wantRun(t, "its run", run)
}

// testTurnInterrupt: running turns started before the cutoff become
// interrupted; later running turns, paused and finished ones stay. The
// turns start in 2001 so that no other check's turns (which start later)
// fall before the cutoff on a shared store.
func testTurnInterrupt(t *testing.T, f *fixture) {
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	cutoff, now := old.Add(time.Hour), old.Add(2*time.Hour)
	mk := func(id, status string, start time.Time) store.Turn {
		tu := f.newTurn("org", id)
		tu.Status, tu.StartedAt, tu.EndedAt, tu.Question, tu.Suggested = status, start, time.Time{}, "", ""
		if status == store.TurnPaused {
			tu.Question = "Which day?"
		}
		if err := f.PutTurn(t.Context(), tu); err != nil {
			t.Fatalf("PutTurn: %v", err)
		}
		return tu
	}
	stale := mk("stale", store.TurnRunning, old)
	fresh := mk("fresh", store.TurnRunning, cutoff.Add(time.Minute))
	paused := mk("paused", store.TurnPaused, old)
	n, err := f.InterruptTurns(t.Context(), cutoff, now)
	if err != nil {
		t.Fatalf("InterruptTurns: %v", err)
	}
	if n < 1 {
		t.Fatalf("InterruptTurns reported %d turns, want at least the stale one", n)
	}
	got, err := f.GetTurn(t.Context(), stale.OrgID, stale.ID)
	if err != nil || got.Status != store.TurnInterrupted || !got.EndedAt.Equal(now) {
		t.Errorf("stale turn: %+v, %v; want interrupted, ended %v", got, err, now)
	}
	for _, keep := range []store.Turn{fresh, paused} {
		got, err := f.GetTurn(t.Context(), keep.OrgID, keep.ID)
		if err != nil || got.Status != keep.Status || !got.EndedAt.IsZero() {
			t.Errorf("turn %s changed: %+v, %v", keep.ID, got, err)
		}
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
		Model:          "anthropic:claude-sonnet",
		Timezone:       "Asia/Kolkata",
		Payer:          "org",
		Tools:          []string{"web.search", "calendar.create", "files.read"},
		Excluded: []store.Exclusion{
			{Name: "web_search", Reason: "web search is disabled in config"},
			{Name: "fetch_url", Reason: "not in the agent's allowlist"},
		},
		Declared: []store.Exclusion{
			{Name: "web.search", Reason: `opened by: search (phrase "look up", pack)`},
			{Name: "calendar.create", Reason: "always-on: kept by deliberate tool mode"},
			{Name: "files.read", Reason: "opened by: files (earlier in this conversation)"},
		},
		Selected:  7,
		Status:    store.TurnRunning,
		Steps:     2,
		StartedAt: at(30),
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
		{"ExclusionsOrderKept", func(tu *store.Turn) {
			tu.Excluded = []store.Exclusion{
				{Name: "zeta", Reason: "z"}, {Name: "alpha", Reason: "«naïve» 'quote\"\n🙂"},
				{Name: "mcp/notes.search", Reason: ""}, {Name: "alpha", Reason: "repeated name kept"},
			}
		}},
		{"ZeroFields", func(tu *store.Turn) { *tu = store.Turn{ID: tu.ID, OrgID: tu.OrgID} }},
		{"Unicode", func(tu *store.Turn) { tu.Agent, tu.Payer = "agent «ß»", "naïve 'quote\"" }},
		{"Paused", func(tu *store.Turn) {
			tu.Status, tu.Steps = store.TurnPaused, 4
			tu.Question, tu.Suggested = "Which airport, «ZRH» or BSL? 🙂", "ZRH\nBSL"
		}},
		{"Done", func(tu *store.Turn) { tu.Status, tu.Steps, tu.EndedAt = store.TurnDone, 9, at(45) }},
		{"Failed", func(tu *store.Turn) { tu.Status, tu.Steps, tu.EndedAt = store.TurnFailed, 0, at(31) }},
		{"EndedInOtherZone", func(tu *store.Turn) {
			tu.Status, tu.EndedAt = store.TurnInterrupted, at(50).In(time.FixedZone("UTC-10", -10*3600))
		}},
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
			if !got.EndedAt.IsZero() { // a zero EndedAt is checked by diff
				wantUTC(t, "EndedAt", got.EndedAt)
			}
		})
	}
}

// testTurnReplace puts one turn through the states the agent loop stores
// and checks that each put replaces every field of the one before,
// including clearing a question and an EndedAt.
func testTurnReplace(t *testing.T, f *fixture) {
	running := f.newTurn("org", "turn")
	paused := running
	paused.Status, paused.Steps, paused.Tools, paused.Timezone = store.TurnPaused, 3, []string{"files.read"}, ""
	paused.Excluded = []store.Exclusion{{Name: "web.search", Reason: "the model cannot take its schema"}}
	paused.Model, paused.StartedAt = "openai:gpt-5", at(31)
	paused.Question, paused.Suggested = "Which day?", "Monday"
	done := paused
	done.Status, done.Steps, done.Question, done.Suggested, done.EndedAt = store.TurnDone, 5, "", "", at(33)
	rerun := done
	rerun.Status, rerun.EndedAt = store.TurnRunning, time.Time{}
	steps := []struct {
		name string
		turn store.Turn
	}{{"Running", running}, {"Paused", paused}, {"Done", done}, {"Rerun", rerun}}
	for _, step := range steps {
		if err := f.PutTurn(t.Context(), step.turn); err != nil {
			t.Fatalf("PutTurn %s: %v", step.name, err)
		}
		got, err := f.GetTurn(t.Context(), step.turn.OrgID, step.turn.ID)
		if err != nil {
			t.Fatalf("GetTurn %s: %v", step.name, err)
		}
		if d := diff(step.turn, got); d != "" {
			t.Errorf("GetTurn after put %s (-want +got):\n%s", step.name, d)
		}
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
	theirs.OrgID, theirs.Status, theirs.Tools = f.id("other-org"), store.TurnDone, nil
	theirs.Model, theirs.Steps, theirs.EndedAt = "other:model", 7, at(59)
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

// testTurnExclusionsNilOrEmpty: a turn stored without exclusions (as
// before they were recorded) reads back nil, one that left nothing out an
// empty non-nil slice, and a put replaces one with the other. The suite's
// diff equates the two, so nil-ness is checked on its own.
func testTurnExclusionsNilOrEmpty(t *testing.T, f *fixture) {
	tu := f.newTurn("org", "turn")
	for _, step := range []struct {
		name    string
		put     []store.Exclusion
		wantNil bool
	}{
		{"Nil", nil, true},
		{"Empty", []store.Exclusion{}, false},
		{"NilAgain", nil, true},
		{"Some", []store.Exclusion{{Name: "a", Reason: "b"}}, false},
		{"EmptyAfterSome", []store.Exclusion{}, false},
	} {
		tu.Excluded = step.put
		if err := f.PutTurn(t.Context(), tu); err != nil {
			t.Fatalf("PutTurn %s: %v", step.name, err)
		}
		got, err := f.GetTurn(t.Context(), tu.OrgID, tu.ID)
		if err != nil {
			t.Fatalf("GetTurn %s: %v", step.name, err)
		}
		if (got.Excluded == nil) != step.wantNil {
			t.Errorf("%s: Excluded = %#v, want nil %v", step.name, got.Excluded, step.wantNil)
		}
		if d := diff(tu, got); d != "" {
			t.Errorf("GetTurn after put %s (-want +got):\n%s", step.name, d)
		}
	}
}

// testTurnExclusionsBounded: a store keeps the first MaxTurnExclusions
// exclusions and at most MaxExclusionReason bytes of each reason, cut
// before a rune that would cross the limit; the caller's slice is left
// alone.
func testTurnExclusionsBounded(t *testing.T, f *fixture) {
	if store.MaxTurnExclusions != 500 || store.MaxExclusionReason != 500 {
		t.Fatalf("bounds changed to %d entries, %d bytes: update this check", store.MaxTurnExclusions, store.MaxExclusionReason)
	}
	a := func(n int) string { return strings.Repeat("a", n) }
	reasons := []struct{ put, want string }{
		{a(500), a(500)},                     // at the limit: kept whole
		{a(501), a(500)},                     // one byte over
		{a(499) + "é" + a(10), a(499)},       // a 2-byte rune across the limit
		{a(498) + "€" + a(10), a(498)},       // a 3-byte rune across the limit
		{a(497) + "🙂" + a(10), a(497)},       // a 4-byte rune ending at 501
		{a(496) + "🙂" + a(10), a(496) + "🙂"}, // a 4-byte rune ending at the limit
		{strings.Repeat("ß", 300), strings.Repeat("ß", 250)},
	}
	tu := f.newTurn("org", "turn")
	tu.Excluded = nil
	var want []store.Exclusion
	for i := range 600 {
		e := store.Exclusion{Name: fmt.Sprintf("tool_%03d", i), Reason: "short"}
		if i < len(reasons) {
			e.Reason = reasons[i].put
		}
		tu.Excluded = append(tu.Excluded, e)
		if i < 500 {
			if i < len(reasons) {
				e.Reason = reasons[i].want
			}
			want = append(want, e)
		}
	}
	put := slices.Clone(tu.Excluded)
	if err := f.PutTurn(t.Context(), tu); err != nil {
		t.Fatalf("PutTurn: %v", err)
	}
	if d := diff(put, tu.Excluded); d != "" {
		t.Errorf("PutTurn changed the caller's exclusions (-before +after):\n%s", d)
	}
	got, err := f.GetTurn(t.Context(), tu.OrgID, tu.ID)
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if d := diff(want, got.Excluded); d != "" {
		t.Errorf("stored exclusions (-want +got):\n%s", d)
	}
	for _, e := range got.Excluded {
		if !utf8.ValidString(e.Reason) {
			t.Errorf("reason of %s is not valid UTF-8: %q", e.Name, e.Reason)
		}
	}
}

// testTurnDeclaredNilOrKept: a turn no gate chose reads back Declared nil,
// one a gate chose its entries in order (an empty list non-nil), a put
// replaces one with the other, and the bounds of Excluded apply.
func testTurnDeclaredNilOrKept(t *testing.T, f *fixture) {
	tu := f.newTurn("org", "turn")
	long := strings.Repeat("b", store.MaxExclusionReason+20)
	for _, step := range []struct {
		name    string
		put     []store.Exclusion
		want    []store.Exclusion
		wantNil bool
	}{
		{"Nil", nil, nil, true},
		{"Empty", []store.Exclusion{}, []store.Exclusion{}, false},
		{"Some", []store.Exclusion{{Name: "z", Reason: "2"}, {Name: "a", Reason: "1"}},
			[]store.Exclusion{{Name: "z", Reason: "2"}, {Name: "a", Reason: "1"}}, false},
		{"LongReasonCut", []store.Exclusion{{Name: "a", Reason: long}},
			[]store.Exclusion{{Name: "a", Reason: long[:store.MaxExclusionReason]}}, false},
		{"NilAgain", nil, nil, true},
	} {
		tu.Declared = step.put
		if err := f.PutTurn(t.Context(), tu); err != nil {
			t.Fatalf("PutTurn %s: %v", step.name, err)
		}
		got, err := f.GetTurn(t.Context(), tu.OrgID, tu.ID)
		if err != nil {
			t.Fatalf("GetTurn %s: %v", step.name, err)
		}
		if (got.Declared == nil) != step.wantNil {
			t.Errorf("%s: Declared = %#v, want nil %v", step.name, got.Declared, step.wantNil)
		}
		if d := diff(step.want, got.Declared); d != "" {
			t.Errorf("%s: Declared (-want +got):\n%s", step.name, d)
		}
	}
}
