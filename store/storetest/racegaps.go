package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks two races the rules promise to survive that the other
// concurrent checks do not reach: the first save of an organisation's
// settings, when no version is stored yet, and enables of one typed
// family racing each other rather than creates.

// testSettingsFirstSaveConcurrent makes an organisation's first save
// (over version 0, settings never saved) from several goroutines at once
// and checks that exactly one wins, whole, and every other one is
// ErrConflict.
func testSettingsFirstSaveConcurrent(t *testing.T, f *fixture) {
	const writers = 8
	org := f.createOrg(t, "org")
	saves := make([]store.OrgSettings, writers)
	for i := range saves {
		saves[i] = newSettings(org, 0, fmt.Sprint("first-", i))
		saves[i].Secrets[fmt.Sprint("only-", i)] = "v1.k1.mine"
	}
	versions, errs := f.raceSettings(t.Context(), saves)
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("writers %d and %d both made the first save", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("writer %d: err = %v, want nil or store.ErrConflict", i, err)
		}
	}
	if won < 0 {
		t.Fatalf("no writer made the first save")
	}
	if versions[won] != 1 {
		t.Errorf("the first save got version %d, want 1", versions[won])
	}
	want := saves[won]
	want.Version = 1
	f.wantSettings(t, "the first save's winner", want)
}

// testMCPConcurrentEnable enables 8 disabled servers of one typed family
// from 8 goroutines at once and checks that exactly one succeeds, the
// rest fail with ErrFamilyInUse, and one server of the family is enabled.
func testMCPConcurrentEnable(t *testing.T, f *fixture) {
	const writers = 8
	for i := range writers {
		f.createMCP(t, f.typedMCPServer("org", fmt.Sprint("ws-", i), store.MCPWebSearch, false))
	}
	org := f.id("org")
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { errs[i] = f.SetMCPServerEnabled(t.Context(), org, fmt.Sprint("ws-", i), true, at(40)) })
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, store.ErrFamilyInUse) {
			t.Errorf("writer %d: err = %v, want nil or store.ErrFamilyInUse", i, err)
		}
	}
	if ok != 1 {
		t.Errorf("%d of %d enables succeeded, want 1", ok, writers)
	}
	if n := len(f.listEnabledMCP(t, org)); n != 1 {
		t.Errorf("%d web_search servers enabled, want 1", n)
	}
}
