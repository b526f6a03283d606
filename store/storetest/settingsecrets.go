package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks the Settings methods that see sealed secrets in every
// organisation. A shared store holds other subtests' secrets too, so the
// checks only ever change their own organisations' secrets, and compare
// counts before and after.

// countSecrets returns CountOrgSecrets' answer, failing the test on error.
func (f *fixture) countSecrets(t *testing.T) int {
	t.Helper()
	n, err := f.CountOrgSecrets(t.Context())
	if err != nil {
		t.Fatalf("CountOrgSecrets: %v", err)
	}
	return n
}

// testSettingsCountSecrets runs alone: it counts the secrets of every
// organisation before and after its own saves, a refused one included.
func testSettingsCountSecrets(t *testing.T, f *fixture) {
	before := f.countSecrets(t)
	a, b := f.createOrg(t, "org-a"), f.createOrg(t, "org-b")
	f.createOrg(t, "never-saved")
	sa, sb := newSettings(a, 0, "a"), newSettings(b, 0, "b")
	sb.Secrets = map[string]string{"anthropic": "v1.k1.b"}
	sa, sb = f.saveOrgSettings(t, sa), f.saveOrgSettings(t, sb)
	steps := []struct {
		name string
		save func()
		want int
	}{
		{"TwoOrgs", func() {}, before + 3},
		{"ReplacedByOne", func() {
			s := newSettings(a, sa.Version, "a2")
			s.Secrets = map[string]string{"openai": "v1.k1.a2"}
			f.saveOrgSettings(t, s)
		}, before + 2},
		{"RefusedSave", func() {
			s := newSettings(b, sb.Version+1, "stale")
			s.Secrets["third"] = "v1.k1.third"
			_, err := f.PutOrgSettings(t.Context(), s)
			wantErrIs(t, "PutOrgSettings over a version B never had", err, store.ErrConflict)
		}, before + 2},
		{"NoneLeft", func() {
			s := newSettings(b, sb.Version, "b2")
			s.Secrets = nil
			f.saveOrgSettings(t, s)
		}, before + 1},
	}
	for _, st := range steps {
		st.save()
		if got := f.countSecrets(t); got != st.want {
			t.Errorf("%s: CountOrgSecrets = %d, want %d (%d before)", st.name, got, st.want, before)
		}
	}
}

// secretRewrapper is a rewrap function that changes the secrets of some
// organisations as change says, hands back every other secret unchanged,
// and records which secrets of those organisations it was given.
type secretRewrapper struct {
	orgs   map[string]bool
	change func(orgID, name, sealed string) (string, error)

	mu   sync.Mutex // a store may rewrap from several goroutines
	seen map[string]map[string]string
}

// rewrap is the function given to RewrapOrgSecrets.
func (r *secretRewrapper) rewrap(orgID, name, sealed string) (string, error) {
	if !r.orgs[orgID] {
		return sealed, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]map[string]string{}
	}
	if r.seen[orgID] == nil {
		r.seen[orgID] = map[string]string{}
	}
	if _, ok := r.seen[orgID][name]; ok {
		return "", errors.New("given the same secret twice")
	}
	r.seen[orgID][name] = sealed
	return r.change(orgID, name, sealed)
}

// testSettingsRewrap rewraps all but one secret of two organisations and
// checks the count, that rewrap was given every secret of theirs once, as
// stored, and that only secrets and versions changed: the two
// organisations' versions go up by one, documents and UpdatedAt stay, and
// an organisation rewrap kept keeps its secrets and version.
func testSettingsRewrap(t *testing.T, f *fixture) {
	a, b, kept := f.createOrg(t, "org-a"), f.createOrg(t, "org-b"), f.createOrg(t, "org-kept")
	f.createOrg(t, "never-saved")
	sa := newSettings(a, 0, "a")
	sa.Secrets["same"] = "v2.already"
	sa = f.saveOrgSettings(t, f.saveOrgSettings(t, sa)) // saved twice: version 2
	sb, sk := f.saveOrgSettings(t, newSettings(b, 0, "b")), f.saveOrgSettings(t, newSettings(kept, 0, "kept"))
	r := &secretRewrapper{
		orgs: map[string]bool{a: true, b: true, kept: true, f.id("never-saved"): true},
		change: func(orgID, name, sealed string) (string, error) {
			if name == "same" || orgID == kept {
				return sealed, nil
			}
			return "v2." + sealed, nil
		},
	}
	n, err := f.RewrapOrgSecrets(t.Context(), r.rewrap)
	if n != 4 || err != nil {
		t.Errorf("RewrapOrgSecrets = %d, %v; want 4, nil", n, err)
	}
	want := map[string]map[string]string{a: sa.Secrets, b: sb.Secrets, kept: sk.Secrets}
	if d := diff(want, r.seen); d != "" {
		t.Errorf("rewrap was given (-stored +given):\n%s", d)
	}
	for _, s := range []*store.OrgSettings{&sa, &sb} {
		s.Version++
		for name, sealed := range s.Secrets {
			if name != "same" {
				s.Secrets[name] = "v2." + sealed
			}
		}
	}
	f.wantSettings(t, "A after RewrapOrgSecrets", sa)
	f.wantSettings(t, "B after RewrapOrgSecrets", sb)
	f.wantSettings(t, "the organisation whose secrets rewrap kept", sk)
	f.wantNeverSaved(t, "an organisation that never saved", f.id("never-saved"))
}

// testSettingsRewrapFails fails rewrap midway through two organisations'
// secrets, after it changed others, and checks that its error comes back
// and no secret changed.
func testSettingsRewrapFails(t *testing.T, f *fixture) {
	errKey := errors.New("key k1 unavailable")
	a, b := f.createOrg(t, "org-a"), f.createOrg(t, "org-b")
	sa := newSettings(a, 0, "a")
	sa.Secrets["third"] = "v1.k1.third"
	sa, sb := f.saveOrgSettings(t, sa), f.saveOrgSettings(t, newSettings(b, 0, "b"))
	calls := 0 // under r.mu
	r := &secretRewrapper{
		orgs: map[string]bool{a: true, b: true},
		change: func(_, _, sealed string) (string, error) {
			calls++
			if calls == 3 { // two changed before, two to come
				return "", errKey
			}
			return "v2." + sealed, nil
		},
	}
	n, err := f.RewrapOrgSecrets(t.Context(), r.rewrap)
	if n != 0 || !errors.Is(err, errKey) {
		t.Errorf("RewrapOrgSecrets = %d, %v; want 0 and rewrap's error", n, err)
	}
	f.wantSettings(t, "A after a failed RewrapOrgSecrets", sa)
	f.wantSettings(t, "B after a failed RewrapOrgSecrets", sb)
}

// testSettingsRewrapConflict reads an organisation's settings, rewraps a
// secret of theirs, then saves over the version read, as a settings save
// racing a key rotation does, and checks that the save is ErrConflict
// and left the rewrapped secret: a secret sealed under the old key must
// not be written back. A save over the version read afterwards goes
// ahead.
func testSettingsRewrapConflict(t *testing.T, f *fixture) {
	org := f.createOrg(t, "org")
	read := f.saveOrgSettings(t, newSettings(org, 0, "a"))
	r := &secretRewrapper{
		orgs: map[string]bool{org: true},
		change: func(_, name, sealed string) (string, error) {
			if name == "openai" {
				return "v2." + sealed, nil
			}
			return sealed, nil
		},
	}
	if n, err := f.RewrapOrgSecrets(t.Context(), r.rewrap); n != 1 || err != nil {
		t.Fatalf("RewrapOrgSecrets = %d, %v; want 1, nil", n, err)
	}
	rewrapped := read
	rewrapped.Secrets = map[string]string{"anthropic": read.Secrets["anthropic"], "openai": "v2." + read.Secrets["openai"]}
	rewrapped.Version = read.Version + 1

	stale := newSettings(org, read.Version, "stale")
	stale.Secrets = read.Secrets // as read: sealed under the old key
	_, err := f.PutOrgSettings(t.Context(), stale)
	wantErrIs(t, "PutOrgSettings over the version read before RewrapOrgSecrets", err, store.ErrConflict)
	f.wantSettings(t, "settings after the refused save", rewrapped)

	fresh := newSettings(org, f.orgSettings(t, org).Version, "fresh")
	fresh.Secrets = rewrapped.Secrets
	f.wantSettings(t, "settings after a save over the version read again", f.saveOrgSettings(t, fresh))
}
