package storetest

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// resultCases checks the Results repository.
func resultCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testResultRoundTrip},
		{"NotFound", testResultNotFound},
		{"DuplicateRef", testResultDuplicateRef},
		{"QuotaEvictsOldestOfConversation", testQuotaConversation},
		{"QuotaEvictsOldestOfUser", testQuotaUser},
		{"QuotaRefusesOversized", testQuotaOversized},
		{"QuotaUnderConcurrentPuts", testQuotaConcurrent},
	}
}

// newResult returns a result with every field set.
func (f *fixture) newResult(ref string) store.Result {
	return store.Result{
		Ref:            f.id(ref),
		OrgID:          f.id("org"),
		ConversationID: f.id("conv"),
		TurnID:         f.id("turn"),
		UserID:         f.id("user"),
		Tool:           "web.fetch",
		Body:           "<html>\n\tbody «ß» 🙂\n</html>",
		CreatedAt:      at(40),
	}
}

// put stores r, failing the test on error.
func (f *fixture) put(t *testing.T, r store.Result) {
	t.Helper()
	if err := f.PutResult(t.Context(), r, store.ResultQuota{}); err != nil {
		t.Fatalf("PutResult %s: %v", r.Ref, err)
	}
}

func testResultRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Result)
	}{
		{"AllFields", func(*store.Result) {}},
		{"EmptyBody", func(r *store.Result) { r.Body = "" }},
		{"LargeBody", func(r *store.Result) { r.Body = strings.Repeat("0123456789abcdef", 1<<16) }},
		{"RawBytes", func(r *store.Result) { r.Body = rawBytes }},
		{"ZeroFields", func(r *store.Result) {
			*r = store.Result{Ref: r.Ref, OrgID: r.OrgID, ConversationID: r.ConversationID}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newResult(tc.name)
			tc.edit(&want)
			f.put(t, want)
			got, err := f.GetResult(t.Context(), want.OrgID, want.ConversationID, want.Ref)
			if err != nil {
				t.Fatalf("GetResult: %v", err)
			}
			if d := diff(want, got); d != "" {
				t.Errorf("GetResult mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "CreatedAt", got.CreatedAt)
		})
	}
}

// testResultNotFound checks that a result is reachable only from its own
// organisation and conversation, and that the error does not say whether
// it exists elsewhere.
func testResultNotFound(t *testing.T, f *fixture) {
	r := f.newResult("res")
	f.put(t, r)
	tests := []struct{ name, org, conv, ref string }{
		{"MissingRef", r.OrgID, r.ConversationID, f.id("missing")},
		{"OtherOrg", f.id("other-org"), r.ConversationID, r.Ref},
		{"OtherConversation", r.OrgID, f.id("other-conv"), r.Ref},
		{"OtherOrgAndConversation", f.id("other-org"), f.id("other-conv"), r.Ref},
		{"EmptyOrg", "", r.ConversationID, r.Ref},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.GetResult(t.Context(), tc.org, tc.conv, tc.ref)
			wantNotFound(t, "GetResult", err)
			if d := diff(store.Result{}, got); d != "" {
				t.Errorf("GetResult revealed a record (-want +got):\n%s", d)
			}
		})
	}
}

// testResultDuplicateRef checks that a Ref already stored, in this or any
// other organisation, is refused and the stored result left unchanged.
func testResultDuplicateRef(t *testing.T, f *fixture) {
	first := f.newResult("res")
	f.put(t, first)
	tests := []struct {
		name string
		edit func(*store.Result)
	}{
		{"SameScope", func(r *store.Result) { r.Body = "replaced" }},
		{"Identical", func(*store.Result) {}},
		{"OtherConversation", func(r *store.Result) { r.ConversationID, r.Body = f.id("other-conv"), "x" }},
		{"OtherOrg", func(r *store.Result) { r.OrgID, r.Body = f.id("other-org"), "x" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dup := first
			tc.edit(&dup)
			if err := f.PutResult(t.Context(), dup, store.ResultQuota{}); err == nil {
				t.Errorf("PutResult with a stored Ref: err = nil, want an error")
			}
			got, err := f.GetResult(t.Context(), first.OrgID, first.ConversationID, first.Ref)
			if err != nil {
				t.Fatalf("GetResult: %v", err)
			}
			if d := diff(first, got); d != "" {
				t.Errorf("refused PutResult changed the stored result (-want +got):\n%s", d)
			}
		})
	}
}
