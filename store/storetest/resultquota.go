package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// quotaResult is a result of size bytes in conv, by user, put at minute.
func (f *fixture) quotaResult(ref, conv, user string, size, minute int) store.Result {
	return store.Result{Ref: f.id(ref), OrgID: f.id("org"), ConversationID: f.id(conv), TurnID: f.id("turn"),
		UserID: f.id(user), Tool: "read_file", Body: strings.Repeat("x", size), CreatedAt: at(minute)}
}

// putWithin stores r within q, failing the test on error.
func (f *fixture) putWithin(t *testing.T, r store.Result, q store.ResultQuota) {
	t.Helper()
	if err := f.PutResult(t.Context(), r, q); err != nil {
		t.Fatalf("PutResult %s: %v", r.Ref, err)
	}
}

// wantHeld checks which of rs still hold their body (the others must be
// evicted, not missing).
func (f *fixture) wantHeld(t *testing.T, held map[string]bool, rs ...store.Result) {
	t.Helper()
	for _, r := range rs {
		got, err := f.GetResult(t.Context(), r.OrgID, r.ConversationID, r.Ref)
		switch {
		case held[r.Ref] && err != nil:
			t.Errorf("GetResult %s: %v, want its body", r.Ref, err)
		case held[r.Ref] && got.Body != r.Body:
			t.Errorf("GetResult %s: a body of %d bytes, want %d", r.Ref, len(got.Body), len(r.Body))
		case !held[r.Ref] && !errors.Is(err, store.ErrEvicted):
			t.Errorf("GetResult %s: err = %v, want store.ErrEvicted", r.Ref, err)
		}
	}
}

// testQuotaConversation: a put that would take its conversation past the
// quota evicts that conversation's oldest bodies, and no other's.
func testQuotaConversation(t *testing.T, f *fixture) {
	q := store.ResultQuota{ConversationBytes: 100}
	a1, a2 := f.quotaResult("a1", "a", "u", 40, 1), f.quotaResult("a2", "a", "u", 40, 2)
	other := f.quotaResult("b1", "b", "u", 90, 0)
	f.putWithin(t, other, q)
	f.putWithin(t, a1, q)
	f.putWithin(t, a2, q)
	f.wantHeld(t, map[string]bool{a1.Ref: true, a2.Ref: true, other.Ref: true}, a1, a2, other)
	// 120 bytes would be over: the oldest goes, even though it is put
	// with an earlier time than the one just put.
	a3 := f.quotaResult("a3", "a", "u", 40, 0)
	f.putWithin(t, a3, q)
	f.wantHeld(t, map[string]bool{a2.Ref: true, a3.Ref: true, other.Ref: true}, a1, a2, a3, other)
	// A body exactly filling the quota evicts every other.
	a4 := f.quotaResult("a4", "a", "u", 100, 5)
	f.putWithin(t, a4, q)
	f.wantHeld(t, map[string]bool{a4.Ref: true, other.Ref: true}, a1, a2, a3, a4, other)
}

// testQuotaUser: the user's quota spans their conversations and evicts
// their oldest body wherever it is; another user's are untouched.
func testQuotaUser(t *testing.T, f *fixture) {
	q := store.ResultQuota{UserBytes: 100}
	a1, b1 := f.quotaResult("a1", "a", "u", 40, 1), f.quotaResult("b1", "b", "u", 40, 2)
	stranger := f.quotaResult("s1", "s", "someone-else", 90, 0)
	f.putWithin(t, stranger, q)
	f.putWithin(t, a1, q)
	f.putWithin(t, b1, q)
	a2 := f.quotaResult("a2", "a", "u", 40, 3)
	f.putWithin(t, a2, q)
	f.wantHeld(t, map[string]bool{b1.Ref: true, a2.Ref: true, stranger.Ref: true}, a1, b1, a2, stranger)
	// Without a user, only the conversation's quota applies.
	anon := f.quotaResult("n1", "a", "u", 100, 4)
	anon.UserID = ""
	f.putWithin(t, anon, q)
	f.wantHeld(t, map[string]bool{b1.Ref: true, a2.Ref: true, anon.Ref: true, stranger.Ref: true}, b1, a2, anon, stranger)
}

// testQuotaOversized: a body larger than a limit on its own is refused
// with ErrQuota and evicts nothing; so does a refused duplicate Ref.
func testQuotaOversized(t *testing.T, f *fixture) {
	q := store.ResultQuota{ConversationBytes: 100, UserBytes: 150}
	kept := f.quotaResult("kept", "a", "u", 60, 1)
	f.putWithin(t, kept, q)
	q2 := store.ResultQuota{ConversationBytes: 1000, UserBytes: 150}
	tests := []struct {
		name string
		r    store.Result
		q    store.ResultQuota
	}{
		{"OverTheConversation's", f.quotaResult("big", "a", "u", 101, 2), q},
		{"OverTheUser's", f.quotaResult("bigger", "b", "u", 151, 2), q2},
	}
	for _, tc := range tests {
		if err := f.PutResult(t.Context(), tc.r, tc.q); !errors.Is(err, store.ErrQuota) {
			t.Errorf("%s: PutResult: err = %v, want store.ErrQuota", tc.name, err)
		}
		_, err := f.GetResult(t.Context(), tc.r.OrgID, tc.r.ConversationID, tc.r.Ref)
		wantNotFound(t, tc.name+": GetResult of a refused result", err)
	}
	dup := kept
	dup.Body = strings.Repeat("y", 90)
	if err := f.PutResult(t.Context(), dup, q); err == nil {
		t.Errorf("PutResult with a stored Ref: err = nil, want an error")
	}
	f.wantHeld(t, map[string]bool{kept.Ref: true}, kept)
}

// testQuotaUnderConcurrentPuts: sixteen writers putting into one
// conversation at once never leave it over its quota, nor under-filled:
// exactly the newest that fit are held.
func testQuotaConcurrent(t *testing.T, f *fixture) {
	q := store.ResultQuota{ConversationBytes: 100, UserBytes: 1000}
	rs := make([]store.Result, 16)
	for i := range rs {
		rs[i] = f.quotaResult(string(rune('a'+i)), "a", "u", 40, 1)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	for i := range rs {
		wg.Go(func() { errs[i] = f.PutResult(t.Context(), rs[i], q) })
	}
	wg.Wait()
	held := 0
	for i, r := range rs {
		if errs[i] != nil {
			t.Fatalf("PutResult %s: %v", r.Ref, errs[i])
		}
		_, err := f.GetResult(t.Context(), r.OrgID, r.ConversationID, r.Ref)
		switch {
		case err == nil:
			held++
		case !errors.Is(err, store.ErrEvicted):
			t.Errorf("GetResult %s: %v", r.Ref, err)
		}
	}
	if held != 2 {
		t.Errorf("%d bodies of 40 bytes held under a quota of 100, want 2", held)
	}
}
