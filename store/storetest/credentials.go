package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// This file checks credentials: found by kind and hash until they expire
// (ExpiresAt is when a credential stops working; zero is never), consumed
// once however many callers race, listed per user and kind, newest first.
// A credential belongs to an enabled user, so each check creates its
// users first.

// hashOf returns the lower-case hex SHA-256 of a secret unique to the run
// and subtest, as a Credential holds it.
func (f *fixture) hashOf(secret string) string {
	sum := sha256.Sum256([]byte(f.id(secret)))
	return hex.EncodeToString(sum[:])
}

// newCredential returns a credential of kind for user in org (IDs as
// given), with every field its kind uses set, expiring at at(40).
func (f *fixture) newCredential(kind, org, user, secret string) store.Credential {
	c := store.Credential{
		Hash:      f.hashOf(secret),
		Kind:      kind,
		OrgID:     org,
		UserID:    user,
		CreatedAt: at(10),
		ExpiresAt: at(40),
	}
	switch kind {
	case store.CredAPIToken:
		c.Label = "ci «laptop» " + secret
	case store.CredSession:
		c.CSRF = "csrf-" + secret
	}
	return c
}

// putCredentials stores every credential, failing the test on error.
func (f *fixture) putCredentials(t *testing.T, cs ...store.Credential) {
	t.Helper()
	for _, c := range cs {
		if err := f.PutCredential(t.Context(), c); err != nil {
			t.Fatalf("PutCredential %s %s: %v", c.Kind, c.Label, err)
		}
	}
}

// lookup returns LookupCredential's answer, failing the test on error.
func (f *fixture) lookup(t *testing.T, kind, hash string, now time.Time) store.Credential {
	t.Helper()
	got, err := f.LookupCredential(t.Context(), kind, hash, now)
	if err != nil {
		t.Fatalf("LookupCredential %s at %v: %v", kind, now, err)
	}
	return got
}

// listCredentials returns ListCredentials' answer, failing the test on
// error.
func (f *fixture) listCredentials(t *testing.T, org, user, kind string) []store.Credential {
	t.Helper()
	got, err := f.ListCredentials(t.Context(), org, user, kind)
	if err != nil {
		t.Fatalf("ListCredentials: %v", err)
	}
	return got
}

// wantCredential fails unless got is want.
func wantCredential(t *testing.T, what string, want, got store.Credential) {
	t.Helper()
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// wantGone fails unless no credential of kind and hash works at now.
func (f *fixture) wantGone(t *testing.T, what, kind, hash string, now time.Time) {
	t.Helper()
	got, err := f.LookupCredential(t.Context(), kind, hash, now)
	wantNotFound(t, what, err)
	wantCredential(t, what+" revealed a record", store.Credential{}, got)
}

func testCredentialRoundTrip(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "alice", "bob", "carol", "dave")
	tests := []struct {
		name string
		c    store.Credential
	}{
		{"APIToken", f.newCredential(store.CredAPIToken, org, "alice", "token")},
		{"Session", f.newCredential(store.CredSession, org, "bob", "session")},
		{"LoginLink", f.newCredential(store.CredLoginLink, org, "carol", "link")},
		{"NeverExpires", func() store.Credential {
			c := f.newCredential(store.CredAPIToken, org, "dave", "forever")
			c.ExpiresAt = time.Time{}
			return c
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.putCredentials(t, tc.c)
			got := f.lookup(t, tc.c.Kind, tc.c.Hash, at(20))
			wantCredential(t, "LookupCredential", tc.c, got)
			wantUTC(t, "CreatedAt, ExpiresAt", got.CreatedAt, got.ExpiresAt)
			list := f.listCredentials(t, org, tc.c.UserID, tc.c.Kind)
			if d := diff([]store.Credential{tc.c}, list); d != "" {
				t.Errorf("ListCredentials (-want +got):\n%s", d)
			}
		})
	}
}

// testCredentialExists checks that a hash is unique per kind: the same
// hash again is ErrExists and leaves the first as it was, even from
// another user or organisation, while another kind may hold it, and that
// a credential is found under its own kind only.
func testCredentialExists(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "alice", "mallory")
	f.createMembers(t, "other-org", "alice")
	first := f.newCredential(store.CredAPIToken, org, "alice", "secret")
	f.putCredentials(t, first)
	dups := []struct {
		name string
		c    store.Credential
	}{
		{"Same", first},
		{"OtherUser", f.newCredential(store.CredAPIToken, org, "mallory", "secret")},
		{"OtherOrg", f.newCredential(store.CredAPIToken, f.id("other-org"), "alice", "secret")},
	}
	for _, d := range dups {
		c := d.c
		c.Label, c.ExpiresAt = "impostor", time.Time{}
		wantErrIs(t, d.name+": PutCredential", f.PutCredential(t.Context(), c), store.ErrExists)
	}
	wantCredential(t, "LookupCredential after refused puts", first,
		f.lookup(t, first.Kind, first.Hash, at(20)))
	f.wantGone(t, "LookupCredential under another kind", store.CredSession, first.Hash, at(20))
	session := f.newCredential(store.CredSession, org, "alice", "secret")
	f.putCredentials(t, session)
	wantCredential(t, "the session with the token's hash", session,
		f.lookup(t, store.CredSession, first.Hash, at(20)))
	wantCredential(t, "the token beside a session with its hash", first,
		f.lookup(t, store.CredAPIToken, first.Hash, at(20)))
}

// testCredentialExpiry looks credentials up at instants around their
// expiry: one works strictly before its ExpiresAt, one with a zero
// ExpiresAt always, and an expired one can be neither looked up nor
// consumed.
func testCredentialExpiry(t *testing.T, f *fixture) {
	org := f.createMembers(t, "org", "alice")
	expiring := f.newCredential(store.CredSession, org, "alice", "expiring")
	forever := f.newCredential(store.CredAPIToken, org, "alice", "forever")
	forever.ExpiresAt = time.Time{}
	f.putCredentials(t, expiring, forever)
	far := time.Date(9000, time.January, 1, 0, 0, 0, 0, time.UTC)
	west := time.FixedZone("UTC-10", -10*3600)
	tests := []struct {
		name  string
		c     store.Credential
		now   time.Time
		found bool
	}{
		{"BeforeCreation", expiring, at(0), true},
		{"MillisecondBefore", expiring, at(40).Add(-time.Millisecond), true},
		{"MillisecondBeforeOtherZone", expiring, at(40).Add(-time.Millisecond).In(west), true},
		{"AtExpiry", expiring, at(40), false},
		{"AtExpiryOtherZone", expiring, at(40).In(west), false},
		{"After", expiring, at(41), false},
		{"FarFuture", expiring, far, false},
		{"NeverExpiresNow", forever, at(20), true},
		{"NeverExpiresFarFuture", forever, far, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.found {
				f.wantGone(t, "LookupCredential", tc.c.Kind, tc.c.Hash, tc.now)
				_, err := f.ConsumeCredential(t.Context(), tc.c.Kind, tc.c.Hash, tc.now)
				wantNotFound(t, "ConsumeCredential", err)
				return
			}
			wantCredential(t, "LookupCredential", tc.c, f.lookup(t, tc.c.Kind, tc.c.Hash, tc.now))
		})
	}
}

// testCredentialConsume consumes a login link and checks that it comes
// back once, is gone afterwards, and that consuming what is not there, or
// under another kind, is ErrNotFound and changes nothing.
func testCredentialConsume(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.createMembers(t, "org", "alice")
	link := f.newCredential(store.CredLoginLink, org, "alice", "link")
	other := f.newCredential(store.CredLoginLink, org, "alice", "other")
	f.putCredentials(t, link, other)
	_, err := f.ConsumeCredential(ctx, store.CredSession, link.Hash, at(20))
	wantNotFound(t, "ConsumeCredential under another kind", err)
	_, err = f.ConsumeCredential(ctx, store.CredLoginLink, f.hashOf("missing"), at(20))
	wantNotFound(t, "ConsumeCredential of an unknown hash", err)
	got, err := f.ConsumeCredential(ctx, store.CredLoginLink, link.Hash, at(20))
	if err != nil {
		t.Fatalf("ConsumeCredential: %v", err)
	}
	wantCredential(t, "ConsumeCredential", link, got)
	wantUTC(t, "CreatedAt, ExpiresAt", got.CreatedAt, got.ExpiresAt)
	got, err = f.ConsumeCredential(ctx, store.CredLoginLink, link.Hash, at(20))
	wantNotFound(t, "second ConsumeCredential", err)
	wantCredential(t, "second ConsumeCredential revealed a record", store.Credential{}, got)
	f.wantGone(t, "LookupCredential after ConsumeCredential", link.Kind, link.Hash, at(20))
	wantCredential(t, "the other link", other, f.lookup(t, other.Kind, other.Hash, at(20)))
}

// testCredentialConsumeConcurrent consumes each of 50 login links from
// 16 goroutines at once and checks that exactly one gets it, whole, and
// every other one ErrNotFound. A race is a matter of luck: with fewer
// rounds, a lookup followed by a separate delete passed on two CPUs.
func testCredentialConsumeConcurrent(t *testing.T, f *fixture) {
	const consumers, rounds = 16, 50
	org := f.createMembers(t, "org", "alice")
	for r := range rounds {
		link := f.newCredential(store.CredLoginLink, org, "alice", fmt.Sprint("link-", r))
		f.putCredentials(t, link)
		got := make([]store.Credential, consumers)
		errs := make([]error, consumers)
		start := make(chan struct{}) // released together, to overlap as much as they can
		var wg sync.WaitGroup
		for i := range consumers {
			wg.Go(func() {
				<-start
				got[i], errs[i] = f.ConsumeCredential(t.Context(), link.Kind, link.Hash, at(20))
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
				wantCredential(t, fmt.Sprintf("round %d, winner %d", r, i), link, got[i])
			case !errors.Is(err, store.ErrNotFound):
				t.Errorf("round %d, consumer %d: err = %v, want nil or store.ErrNotFound", r, i, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d of %d consumers got the link, want 1", r, won, consumers)
		}
	}
}

// testCredentialDelete deletes credentials, an expired one included, and
// checks that each is gone alone, and that deleting what is not there, or
// under another kind, is ErrNotFound and changes nothing.
func testCredentialDelete(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.createMembers(t, "org", "alice")
	token := f.newCredential(store.CredAPIToken, org, "alice", "token")
	expired := f.newCredential(store.CredSession, org, "alice", "expired")
	expired.ExpiresAt = at(15)
	kept := f.newCredential(store.CredAPIToken, org, "alice", "kept")
	f.putCredentials(t, token, expired, kept)
	wantNotFound(t, "DeleteCredential under another kind", f.DeleteCredential(ctx, store.CredSession, token.Hash))
	wantNotFound(t, "DeleteCredential of an unknown hash", f.DeleteCredential(ctx, store.CredAPIToken, f.hashOf("x")))
	wantCredential(t, "the token after refused deletes", token, f.lookup(t, token.Kind, token.Hash, at(20)))
	for _, c := range []store.Credential{token, expired} {
		if err := f.DeleteCredential(ctx, c.Kind, c.Hash); err != nil {
			t.Fatalf("DeleteCredential %s: %v", c.Kind, err)
		}
		wantNotFound(t, "second DeleteCredential", f.DeleteCredential(ctx, c.Kind, c.Hash))
		f.wantGone(t, "LookupCredential after DeleteCredential", c.Kind, c.Hash, at(10))
	}
	if d := diff([]store.Credential{kept}, f.listCredentials(t, org, "alice", store.CredAPIToken)); d != "" {
		t.Errorf("ListCredentials after deletes (-want +got):\n%s", d)
	}
}

// testCredentialList stores credentials out of creation order for a user,
// of several kinds, beside those of another user and of the same user ID
// in another organisation, and checks that each list is the user's
// credentials of one kind, newest first.
func testCredentialList(t *testing.T, f *fixture) {
	org, other := f.createMembers(t, "org", "alice", "bob"), f.createMembers(t, "other-org", "alice")
	var tokens []store.Credential // newest first, as listed
	for _, minute := range []int{30, 25, 20, 15, 10} {
		tokens = append(tokens, f.newCredential(store.CredAPIToken, org, "alice", fmt.Sprint("token-", minute)))
		tokens[len(tokens)-1].CreatedAt = at(minute)
	}
	session := f.newCredential(store.CredSession, org, "alice", "session")
	bobs := f.newCredential(store.CredAPIToken, org, "bob", "bob")
	elsewhere := f.newCredential(store.CredAPIToken, other, "alice", "elsewhere")
	f.putCredentials(t, tokens[2], bobs, tokens[4], session, tokens[0], elsewhere, tokens[3], tokens[1])
	tests := []struct {
		name, org, user, kind string
		want                  []store.Credential
	}{
		{"Tokens", org, "alice", store.CredAPIToken, tokens},
		{"Sessions", org, "alice", store.CredSession, []store.Credential{session}},
		{"NoLinks", org, "alice", store.CredLoginLink, nil},
		{"OtherUser", org, "bob", store.CredAPIToken, []store.Credential{bobs}},
		{"OtherOrg", other, "alice", store.CredAPIToken, []store.Credential{elsewhere}},
		{"UnknownUser", org, "carol", store.CredAPIToken, nil},
		{"EmptyOrg", "", "alice", store.CredAPIToken, nil},
		{"EmptyKind", org, "alice", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := f.listCredentials(t, tc.org, tc.user, tc.kind)
			if d := diff(tc.want, got); d != "" {
				t.Errorf("ListCredentials (-want +got):\n%s", d)
			}
		})
	}
}

// testDeleteExpiredCredentials runs alone: it first removes what earlier
// checks left expired, then stores credentials expired, expiring at the
// instant, and still working, and checks that only the expired ones are
// counted and removed, in every organisation.
func testDeleteExpiredCredentials(t *testing.T, f *fixture) {
	now := at(30)
	if _, err := f.DeleteExpiredCredentials(t.Context(), now); err != nil {
		t.Fatalf("DeleteExpiredCredentials before: %v", err)
	}
	f.createMembers(t, "org", "alice")
	f.createMembers(t, "other-org", "alice")
	tests := []struct {
		name    string
		org     string
		expires time.Time
		expired bool
	}{
		{"Expired", "org", at(20), true},
		{"ExpiredLongAgo", "org", at(1), true},
		{"ExpiringNow", "org", now, true},
		{"OtherOrgExpired", "other-org", at(25), true},
		{"Working", "org", at(31), false},
		{"NeverExpires", "org", time.Time{}, false},
	}
	creds := make([]store.Credential, len(tests))
	for i, tc := range tests {
		creds[i] = f.newCredential(store.CredSession, f.id(tc.org), "alice", tc.name)
		creds[i].CreatedAt, creds[i].ExpiresAt = at(0), tc.expires
		f.putCredentials(t, creds[i])
	}
	n, err := f.DeleteExpiredCredentials(t.Context(), now)
	if n != 4 || err != nil {
		t.Errorf("DeleteExpiredCredentials = %d, %v; want 4, nil", n, err)
	}
	for i, tc := range tests {
		c := creds[i]
		if tc.expired {
			f.wantGone(t, tc.name+" after DeleteExpiredCredentials", c.Kind, c.Hash, at(0))
			continue
		}
		wantCredential(t, tc.name+" after DeleteExpiredCredentials", c, f.lookup(t, c.Kind, c.Hash, now))
	}
	if n, err := f.DeleteExpiredCredentials(t.Context(), now); n != 0 || err != nil {
		t.Errorf("second DeleteExpiredCredentials = %d, %v; want 0, nil", n, err)
	}
}
