package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// This file checks organisation settings: a document and a set of sealed
// secrets saved together under a version that counts saves (and key
// rotations that changed the secrets), a save based on another version
// refused whole, and one organisation's settings never seen or changed
// from another. Settings belong to an existing organisation, so each
// check creates its organisations first.

// settingsCases checks the Settings repository.
func settingsCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testSettingsRoundTrip},
		{"NeverSaved", testSettingsNeverSaved},
		{"Conflict", testSettingsConflict},
		{"SecretsReplaced", testSettingsSecretsReplaced},
		{"Concurrent", testSettingsConcurrent},
		{"FirstSaveConcurrent", testSettingsFirstSaveConcurrent},
		{"OrgIsolation", testSettingsIsolation},
		{"Rewrap", testSettingsRewrap},
		{"RewrapFails", testSettingsRewrapFails},
		{"RewrapConflict", testSettingsRewrapConflict},
	}
}

// settingsAloneCases are the Settings checks that count secrets in every
// organisation, so must run while nothing else writes.
func settingsAloneCases() []suiteCase {
	return []suiteCase{
		{"CountSecrets", testSettingsCountSecrets},
	}
}

// newSettings returns settings of the organisation orgID to save over
// version, their document and secrets marked with tag.
func newSettings(orgID string, version int64, tag string) store.OrgSettings {
	return store.OrgSettings{
		OrgID: orgID,
		Doc:   []byte(`{"model": "anthropic:claude", "tag": "` + tag + `", "note": "Zürich «ß»"}`),
		Secrets: map[string]string{
			"anthropic": "v1.k1.anthropic." + tag,
			"openai":    "v1.k1.openai." + tag,
		},
		Version:   version,
		UpdatedAt: at(10 + int(version)%40),
	}
}

// createOrg creates the organisation f.newOrg(name) and returns its ID.
func (f *fixture) createOrg(t *testing.T, name string) string {
	t.Helper()
	o := f.newOrg(name)
	f.createOrgs(t, o)
	return o.ID
}

// saveOrgSettings saves s, failing the test on error or on a version other
// than s.Version+1, and returns s as GetOrgSettings must now answer.
func (f *fixture) saveOrgSettings(t *testing.T, s store.OrgSettings) store.OrgSettings {
	t.Helper()
	v, err := f.PutOrgSettings(t.Context(), s)
	if err != nil {
		t.Fatalf("PutOrgSettings %s over version %d: %v", s.OrgID, s.Version, err)
	}
	if v != s.Version+1 {
		t.Fatalf("PutOrgSettings over version %d = %d, want %d", s.Version, v, s.Version+1)
	}
	s.Version = v
	return s
}

// orgSettings returns GetOrgSettings' answer, failing the test on error.
func (f *fixture) orgSettings(t *testing.T, org string) store.OrgSettings {
	t.Helper()
	got, err := f.GetOrgSettings(t.Context(), org)
	if err != nil {
		t.Fatalf("GetOrgSettings %s: %v", org, err)
	}
	return got
}

// wantSettings fails unless the organisation's stored settings are want;
// nil and empty documents and secret sets are equal.
func (f *fixture) wantSettings(t *testing.T, what string, want store.OrgSettings) {
	t.Helper()
	got := f.orgSettings(t, want.OrgID)
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
	wantUTC(t, what+": UpdatedAt", got.UpdatedAt)
}

// wantNeverSaved fails unless GetOrgSettings answers for org the shape of
// settings never saved: version 0, nil document, zero UpdatedAt, and an
// empty secret set that is not nil (callers add to it).
func (f *fixture) wantNeverSaved(t *testing.T, what, org string) {
	t.Helper()
	got := f.orgSettings(t, org)
	want := store.OrgSettings{OrgID: org, Secrets: map[string]string{}}
	if d := diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
	if got.Secrets == nil || got.Doc != nil {
		t.Errorf("%s: Secrets %#v, Doc %#v; want an empty map and nil", what, got.Secrets, got.Doc)
	}
}

func testSettingsRoundTrip(t *testing.T, f *fixture) {
	many := map[string]string{}
	for i := range 20 {
		many[fmt.Sprintf("key-%02d «ß» %s", i, strings.Repeat("x", i))] = fmt.Sprint("v1.k1.sealed-", i)
	}
	tests := []struct {
		name string
		edit func(*store.OrgSettings)
	}{
		{"AllFields", func(*store.OrgSettings) {}},
		{"NoSecrets", func(s *store.OrgSettings) { s.Secrets = nil }},
		{"EmptyDocument", func(s *store.OrgSettings) { s.Doc, s.Secrets = []byte{}, map[string]string{} }},
		{"ByteExact", func(s *store.OrgSettings) { s.Doc = []byte("{\n  \"a\" : [1, 2.50] ,\"ß\":\"🙂\\u00e9\"}\n") }},
		{"ManySecrets", func(s *store.OrgSettings) { s.Secrets = many }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := newSettings(f.createOrg(t, "org-"+tc.name), 0, "first")
			tc.edit(&first)
			f.wantSettings(t, "GetOrgSettings after the first save", f.saveOrgSettings(t, first))
			second := newSettings(first.OrgID, 1, "second")
			second.UpdatedAt = at(30)
			tc.edit(&second)
			f.wantSettings(t, "GetOrgSettings after the second save", f.saveOrgSettings(t, second))
		})
	}
}

// testSettingsNeverSaved checks the answer for an organisation without
// settings, an unknown one, and one whose only save was refused.
func testSettingsNeverSaved(t *testing.T, f *fixture) {
	org := f.createOrg(t, "org")
	f.wantNeverSaved(t, "an organisation that never saved", org)
	f.wantNeverSaved(t, "an unknown organisation", f.id("unknown-org"))
	f.wantNeverSaved(t, "the empty organisation ID", "")
	_, err := f.PutOrgSettings(t.Context(), newSettings(org, 1, "refused"))
	wantErrIs(t, "PutOrgSettings over version 1 of settings never saved", err, store.ErrConflict)
	f.wantNeverSaved(t, "after a refused first save", org)
}

// testSettingsConflict saves settings twice, then saves over every other
// version, and checks that each is ErrConflict and leaves the document,
// the secrets and the version as they were; the right version then saves.
func testSettingsConflict(t *testing.T, f *fixture) {
	org := f.createOrg(t, "org")
	f.saveOrgSettings(t, newSettings(org, 0, "v1"))
	want := newSettings(org, 1, "v2")
	want.Secrets["third"] = "v1.k1.third"
	want = f.saveOrgSettings(t, want)
	for _, version := range []int64{0, 1, 3, 4, -1, -2} {
		s := newSettings(org, version, fmt.Sprint("stale-", version))
		s.Secrets = map[string]string{"anthropic": "v1.k1.stale", "new": "v1.k1.new"}
		_, err := f.PutOrgSettings(t.Context(), s)
		wantErrIs(t, fmt.Sprintf("PutOrgSettings over version %d of 2", version), err, store.ErrConflict)
		f.wantSettings(t, fmt.Sprintf("after a refused save over version %d", version), want)
	}
	next := newSettings(org, 2, "v3")
	f.wantSettings(t, "a save over the stored version after refused ones", f.saveOrgSettings(t, next))
}

// testSettingsSecretsReplaced saves in turn secret sets that keep, change,
// add and drop names, and checks that each save leaves exactly its own.
func testSettingsSecretsReplaced(t *testing.T, f *fixture) {
	org := f.createOrg(t, "org")
	steps := []struct {
		name    string
		secrets map[string]string
	}{
		{"Three", map[string]string{"a": "v1.a", "b": "v1.b", "c": "v1.c"}},
		{"ChangeOneAddOneDropTwo", map[string]string{"b": "v1.b2", "d": "v1.d"}},
		{"Empty", map[string]string{}},
		{"One", map[string]string{"a": "v1.a3"}},
		{"Nil", nil},
		{"Back", map[string]string{"a": "v1.a5", "c": "v1.c5"}},
	}
	for i, st := range steps {
		s := newSettings(org, int64(i), st.name)
		s.Secrets = st.secrets
		f.wantSettings(t, st.name+": GetOrgSettings", f.saveOrgSettings(t, s))
	}
}

// testSettingsConcurrent saves from several goroutines at once, all over
// the stored version, round after round, and checks that exactly one
// save wins each round, whole, and every other one is ErrConflict. Each
// writer's secret set holds a name of its own, so a mix of two saves is
// caught.
func testSettingsConcurrent(t *testing.T, f *fixture) {
	const writers, rounds = 8, 20
	org := f.createOrg(t, "org")
	stored := f.saveOrgSettings(t, newSettings(org, 0, "start"))
	for r := range rounds {
		saves := make([]store.OrgSettings, writers)
		for i := range saves {
			saves[i] = newSettings(org, stored.Version, fmt.Sprintf("round-%d-writer-%d", r, i))
			saves[i].Secrets[fmt.Sprint("only-", i)] = "v1.k1.mine"
		}
		versions, errs := f.raceSettings(t.Context(), saves)
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: writers %d and %d both saved over version %d", r, won, i, stored.Version)
			case err == nil:
				won = i
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d, writer %d: err = %v, want nil or store.ErrConflict", r, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no writer saved over version %d", r, stored.Version)
		}
		if versions[won] != stored.Version+1 {
			t.Errorf("round %d: the winner got version %d, want %d", r, versions[won], stored.Version+1)
		}
		stored = saves[won]
		stored.Version++
		f.wantSettings(t, fmt.Sprintf("round %d: the winner's settings", r), stored)
	}
}

// raceSettings makes every save at once, from goroutines released
// together to overlap as much as they can, and returns their answers.
func (f *fixture) raceSettings(ctx context.Context, saves []store.OrgSettings) ([]int64, []error) {
	versions := make([]int64, len(saves))
	errs := make([]error, len(saves))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range saves {
		wg.Go(func() {
			<-start
			versions[i], errs[i] = f.PutOrgSettings(ctx, saves[i])
		})
	}
	close(start)
	wg.Wait()
	return versions, errs
}

// testSettingsIsolation checks that two organisations' settings, with the
// same secret names, have their own versions and secrets: a save, a
// refused save or a read of one never shows or changes the other.
func testSettingsIsolation(t *testing.T, f *fixture) {
	a, b := f.createOrg(t, "org-a"), f.createOrg(t, "org-b")
	wantA := f.saveOrgSettings(t, newSettings(a, 0, "a"))
	f.wantNeverSaved(t, "B after A saved", b)
	f.wantNeverSaved(t, "A's ID in upper case", strings.ToUpper(a))
	onlyB := newSettings(b, 0, "b")
	onlyB.Secrets = map[string]string{"anthropic": "v1.k1.anthropic.b"} // A's openai stays
	wantB := f.saveOrgSettings(t, onlyB)
	f.wantSettings(t, "A after B saved", wantA)
	_, err := f.PutOrgSettings(t.Context(), newSettings(b, 0, "stale"))
	wantErrIs(t, "PutOrgSettings over B's old version", err, store.ErrConflict)
	_, err = f.PutOrgSettings(t.Context(), newSettings(b, 2, "ahead"))
	wantErrIs(t, "PutOrgSettings over a version B never had", err, store.ErrConflict)
	wantA = f.saveOrgSettings(t, newSettings(a, 1, "a2"))
	f.wantSettings(t, "B after A saved again", wantB)
	f.wantSettings(t, "A after B's refused saves", wantA)
}

// settingsCalls returns a call of every Settings method on s, stored.
func settingsCalls(f *fixture, s store.OrgSettings) []call {
	changed := newSettings(s.OrgID, s.Version, "changed")
	changed.Secrets["extra"] = "v1.k1.extra"
	return []call{
		{"GetOrgSettings", func(ctx context.Context) error { _, err := f.GetOrgSettings(ctx, s.OrgID); return err }},
		{"PutOrgSettings", func(ctx context.Context) error { _, err := f.PutOrgSettings(ctx, changed); return err }},
		{"CountOrgSecrets", func(ctx context.Context) error { _, err := f.CountOrgSecrets(ctx); return err }},
		{"RewrapOrgSecrets", func(ctx context.Context) error {
			_, err := f.RewrapOrgSecrets(ctx, func(org, _, sealed string) (string, error) {
				if org != s.OrgID {
					return sealed, nil // never another check's secrets
				}
				return "v2." + sealed, nil
			})
			return err
		}},
	}
}
