package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
)

// These tests play replicas on one database (replicas_test.go) to check
// the credential rules under concurrent writers in several processes: a
// login link is consumed once, and a disabled user holds no credential,
// however a PutCredential and a DisableUser interleave.

// linkOf returns a login link of the user, named by secret.
func linkOf(org, id, secret string) store.Credential {
	sum := sha256.Sum256([]byte(secret))
	return store.Credential{Hash: hex.EncodeToString(sum[:]), Kind: store.CredLoginLink,
		OrgID: org, UserID: id, CreatedAt: when, ExpiresAt: when.Add(time.Hour)}
}

// TestConsumeCredentialQueued holds a login link's row locked while
// consumers on two replicas, as many as their pools hold, all reach the
// server and wait for it; released together, exactly one gets the link
// and every other ErrNotFound. A consumer that looked the link up first
// and deleted it apart would pass its look-up before waiting, and win too.
func TestConsumeCredentialQueued(t *testing.T) {
	r := openReplicas(t, 2)
	ctx := t.Context()
	org := accountsFixture(t, r.stores[0], "org", []string{"alice"}, nil)
	link := linkOf(org, "alice", "link")
	if err := r.stores[0].PutCredential(ctx, link); err != nil {
		t.Fatalf("PutCredential: %v", err)
	}
	release := r.hold(t, `SELECT 1 FROM credentials WHERE kind = $1 AND hash = $2 FOR UPDATE`, link.Kind, link.Hash)

	type answer struct {
		c   store.Credential
		err error
	}
	answers := make(chan answer, 2*replicaConns)
	for i := range 2 * replicaConns {
		go func() {
			c, err := r.stores[i%2].ConsumeCredential(ctx, link.Kind, link.Hash, when)
			answers <- answer{c, err}
		}()
	}
	// Every consumer is waiting: none can have answered.
	r.waitBlocked(t, 0, replicaConns, nil)
	r.waitBlocked(t, 1, replicaConns, nil)
	release(true)

	won := 0
	for range 2 * replicaConns {
		a := <-answers
		switch {
		case a.err == nil:
			won++
			if a.c != link {
				t.Errorf("the winner got %+v, want %+v", a.c, link)
			}
		case !errors.Is(a.err, store.ErrNotFound):
			t.Errorf("a consumer: err = %v, want nil or store.ErrNotFound", a.err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d consumers got the link, want 1", won, 2*replicaConns)
	}
	if _, err := r.stores[1].LookupCredential(ctx, link.Kind, link.Hash, when); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LookupCredential of the consumed link: err = %v, want store.ErrNotFound", err)
	}
}

// TestDisableUserRacesPutCredential pauses one of PutCredential and
// DisableUser of one user half way, holding its locks, runs the other on
// another replica, then lets both finish, and checks that the user ends
// disabled holding no credential, the PutCredential having either been
// refused (ErrNotFound) or seen its credential deleted with the others.
func TestDisableUserRacesPutCredential(t *testing.T) {
	r := openReplicas(t, 2)
	ctx := t.Context()
	tests := []struct {
		name string
		// pause returns a statement and its arguments that lock what the
		// first call waits for, half way through.
		pause func(org string, c store.Credential) (string, []any)
		// putFirst: PutCredential is paused (after its check of the user,
		// at its insert), DisableUser runs beside it; otherwise
		// DisableUser is paused (after disabling the user, at deleting the
		// credentials) and PutCredential runs beside it.
		putFirst bool
		// putErr is what PutCredential must answer.
		putErr error
	}{
		{
			name: "PutPausedAtInsert",
			// An uncommitted credential of the same hash: the insert
			// waits to learn whether the hash is taken.
			pause: func(org string, c store.Credential) (string, []any) {
				return `INSERT INTO credentials (` + credentialColumns + `)
					VALUES ($1, $2, $3, $4, '', '', $5, NULL)`,
					[]any{c.Kind, c.Hash, org, c.UserID, when}
			},
			putFirst: true,
		},
		{
			name: "DisablePausedAtRevoke",
			// The user's session: the disable waits to delete it.
			pause: func(org string, c store.Credential) (string, []any) {
				s := sessionOf(org, c.UserID)
				return `SELECT 1 FROM credentials WHERE kind = $1 AND hash = $2 FOR UPDATE`,
					[]any{s.Kind, s.Hash}
			},
			putErr: store.ErrNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			org := accountsFixture(t, r.stores[0], "org-"+tc.name, []string{"root"}, []string{"alice"})
			c := linkOf(org, "alice", tc.name)
			q, args := tc.pause(org, c)
			release := r.hold(t, q, args...)

			// PutCredential on replica 0, DisableUser on replica 1.
			var putErr, disErr error
			calls := []struct {
				replica int
				call    func()
			}{
				{0, func() { putErr = r.stores[0].PutCredential(ctx, c) }},
				{1, func() { disErr = disable(ctx, r.stores[1], org, "alice") }},
			}
			if !tc.putFirst {
				calls[0], calls[1] = calls[1], calls[0]
			}
			var done []<-chan struct{}
			for _, c := range calls {
				done = append(done, async(c.call))
				r.waitBlocked(t, c.replica, 1, done[len(done)-1])
			}
			release(false)
			for _, d := range done {
				<-d
			}

			if disErr != nil {
				t.Errorf("DisableUser: %v", disErr)
			}
			if !errors.Is(putErr, tc.putErr) {
				t.Errorf("PutCredential: err = %v, want %v", putErr, tc.putErr)
			}
			wantDisabledWithoutCredentials(t, r.stores[0], org, "alice")
		})
	}
}

// wantDisabledWithoutCredentials fails unless the user is disabled and
// holds no credential of any kind.
func wantDisabledWithoutCredentials(t *testing.T, s *Store, org, id string) {
	t.Helper()
	u, err := s.GetUser(t.Context(), org, id)
	if err != nil {
		t.Fatalf("GetUser: %v", err)
	}
	if u.DisabledAt.IsZero() {
		t.Errorf("%s is enabled, want disabled", id)
	}
	for _, kind := range credentialKinds {
		cs, err := s.ListCredentials(t.Context(), org, id, kind)
		if err != nil {
			t.Fatalf("ListCredentials: %v", err)
		}
		if len(cs) != 0 {
			t.Errorf("disabled %s holds %s credentials %+v, want none", id, kind, cs)
		}
	}
}

// TestCredentialExpiresWithinAMicrosecond looks up a credential whose
// ExpiresAt falls inside a microsecond, finer than timestamptz keeps, at
// instants around it: it never works at or after its ExpiresAt, and works
// until the microsecond it expires in. store/storetest checks the same at
// millisecond precision.
func TestCredentialExpiresWithinAMicrosecond(t *testing.T) {
	s := openTest(t, pgtest.URL(t))
	org := accountsFixture(t, s, "org", []string{"alice"}, nil)
	c := linkOf(org, "alice", "link")
	c.ExpiresAt = when.Add(400 * time.Nanosecond)
	if err := s.PutCredential(t.Context(), c); err != nil {
		t.Fatalf("PutCredential: %v", err)
	}
	tests := []struct {
		name  string
		now   time.Time
		works bool
	}{
		{"TheMicrosecondBefore", when.Add(-time.Nanosecond), true},
		{"AtExpiry", c.ExpiresAt, false},
		{"NanosecondAfter", c.ExpiresAt.Add(time.Nanosecond), false},
		{"LastNanosecondOfItsMicrosecond", when.Add(999 * time.Nanosecond), false},
		{"NextMicrosecond", when.Add(time.Microsecond), false},
	}
	for _, tc := range tests {
		_, err := s.LookupCredential(t.Context(), c.Kind, c.Hash, tc.now)
		if tc.works && err != nil {
			t.Errorf("%s: LookupCredential: %v, want the credential", tc.name, err)
		}
		if !tc.works && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: LookupCredential: err = %v, want store.ErrNotFound", tc.name, err)
		}
	}
}
