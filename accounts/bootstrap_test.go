package accounts_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/sqlite"
)

var example = accounts.ExampleAgent{Name: "assistant", Definition: []byte("name: assistant\nmodel: openai:gpt-4.1-mini\n")}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestBootstrapOnce: a first start makes the organisation, its admin, the
// example agent and a working login link; the next start makes nothing.
func TestBootstrapOnce(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	svc := &accounts.Service{Store: st, Agents: st, Now: func() time.Time { return start }}
	link, made, err := svc.Bootstrap(ctx, example)
	if err != nil || !made {
		t.Fatalf("first start: made %v, %v", made, err)
	}
	users, err := st.ListUsers(ctx, accounts.FirstOrgID)
	if err != nil || len(users) != 1 || users[0].ID != accounts.FirstAdminID || users[0].Role != store.RoleAdmin {
		t.Fatalf("users after a first start: %+v, %v; want one admin", users, err)
	}
	if a, err := st.GetAgent(ctx, accounts.FirstOrgID, example.Name); err != nil || string(a.Definition) != string(example.Definition) {
		t.Errorf("example agent: %+v, %v", a, err)
	}
	if sess, err := svc.SignIn(ctx, link.Secret, ""); err != nil || sess.User.ID != accounts.FirstAdminID {
		t.Fatalf("the first link: %+v, %v", sess, err)
	}
	again, made, err := svc.Bootstrap(ctx, example)
	if err != nil || made || again != (accounts.LoginLink{}) {
		t.Errorf("second start: %+v, made %v, %v; want nothing made", again, made, err)
	}
	if links, err := st.ListCredentials(ctx, accounts.FirstOrgID, accounts.FirstAdminID, store.CredLoginLink); err != nil || len(links) != 0 {
		t.Errorf("login links after the second start: %v, %v; want none", links, err)
	}
}

// TestBootstrapCompletes: a first start cut short after the organisation
// is completed by the next; organisations made by hand are left alone.
func TestBootstrapCompletes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	svc := &accounts.Service{Store: st, Agents: st, Now: func() time.Time { return start }}
	if err := st.CreateOrg(ctx, store.Org{ID: accounts.FirstOrgID, Name: accounts.FirstOrgName, CreatedAt: start}); err != nil {
		t.Fatal(err)
	}
	if _, made, err := svc.Bootstrap(ctx, example); err != nil || !made {
		t.Fatalf("after a cut-short start: made %v, %v", made, err)
	}
	if _, err := st.GetUser(ctx, accounts.FirstOrgID, accounts.FirstAdminID); err != nil {
		t.Errorf("admin: %v", err)
	}

	byHand := openStore(t)
	if err := byHand.CreateOrg(ctx, store.Org{ID: "acme", Name: "Acme", CreatedAt: start}); err != nil {
		t.Fatal(err)
	}
	hand := &accounts.Service{Store: byHand, Agents: byHand, Now: func() time.Time { return start }}
	if _, made, err := hand.Bootstrap(ctx, example); err != nil || made {
		t.Errorf("organisations made by hand: made %v, %v; want nothing made", made, err)
	}
	if _, err := byHand.GetOrg(ctx, accounts.FirstOrgID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the first organisation beside one made by hand: %v, want none", err)
	}
}

// TestBootstrapTogetherMakesOneLink: processes starting together on one
// new database (replicas) set it up once, and only one of them issues
// and prints a login link.
func TestBootstrapTogetherMakesOneLink(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	const n = 4
	// Every start finds the database new before any of them writes.
	together := &barrierAccounts{Accounts: st, n: n, all: make(chan struct{})}
	made := make(chan bool, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			svc := &accounts.Service{Store: together, Agents: st, Now: func() time.Time { return start }}
			_, m, err := svc.Bootstrap(ctx, example)
			made <- m
			errs <- err
		})
	}
	wg.Wait()
	close(made)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a start failed: %v", err)
		}
	}
	count := 0
	for m := range made {
		if m {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d starts made the installation, want 1", count)
	}
	if links, err := st.ListCredentials(ctx, accounts.FirstOrgID, accounts.FirstAdminID, store.CredLoginLink); err != nil || len(links) != 1 {
		t.Errorf("login links: %d, %v; want 1", len(links), err)
	}
}

// barrierAccounts answers CountOrgs only once n callers asked, so that
// they all see the same new database.
type barrierAccounts struct {
	store.Accounts
	n   int
	mu  sync.Mutex
	got int
	all chan struct{}
}

func (b *barrierAccounts) CountOrgs(ctx context.Context) (int, error) {
	n, err := b.Accounts.CountOrgs(ctx)
	b.mu.Lock()
	if b.got++; b.got == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	<-b.all
	return n, err
}
