package postgres

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/store"
)

// The tests of this file race writers through several Stores on one
// database, each with a pool of its own, as several replicas do: the
// rules that span rows (slot limit, one enabled server per family, the
// trigger limit, the open targets' order, the settings version, key
// rotation) must hold with no process serialising the writes.

// ruleStores is how many Stores each test opens on its database.
const ruleStores = 3

// openRuleStores opens ruleStores Stores on one new database.
func openRuleStores(t *testing.T) []*Store {
	t.Helper()
	url := pgtest.URL(t)
	stores := make([]*Store, ruleStores)
	for i := range stores {
		stores[i] = openTest(t, url)
	}
	return stores
}

// raceWriters runs call(i) for i in [0, n) from n goroutines released together,
// so that they overlap as much as they can, and returns their errors.
func raceWriters(n int, call func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = call(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// countRuleOK fails the test unless every error is nil or wraps want, and
// returns how many are nil.
func countRuleOK(t *testing.T, what string, errs []error, want error) int {
	t.Helper()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, want):
			t.Errorf("%s, writer %d: err = %v, want nil or %v", what, i, err, want)
		}
	}
	return ok
}

// ruleTime is the instant the tests stamp their records with.
var ruleTime = time.Date(2025, time.March, 30, 1, 2, 3, 0, time.UTC)

// raceServer returns a server of org named name.
func raceServer(org, name, typ string, enabled bool) store.MCPServer {
	return store.MCPServer{
		ID: org + "/" + name, OrgID: org, Name: name, URL: "https://mcp.example/" + name,
		Token: "v1." + name, Type: typ, Enabled: enabled, CreatedAt: ruleTime, UpdatedAt: ruleTime,
	}
}

// TestMCPSlotRaceAcrossReplicas fills an organisation to two below its
// limit, then races 12 creates through three Stores for the last two
// slots, round after round: exactly the free slots are filled, every
// other create is ErrSlotsFull, and the organisation never holds more
// than its limit.
func TestMCPSlotRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	const limit, writers, rounds = 5, 12, 10
	for r := range rounds {
		org := fmt.Sprint("org-", r)
		for i := range limit - 2 {
			if err := stores[0].CreateMCPServer(t.Context(), raceServer(org, fmt.Sprint("old-", i), store.MCPGeneral, true), limit); err != nil {
				t.Fatalf("round %d: CreateMCPServer before the race: %v", r, err)
			}
		}
		errs := raceWriters(writers, func(i int) error {
			srv := raceServer(org, fmt.Sprint("new-", i), store.MCPGeneral, i%2 == 0)
			return stores[i%ruleStores].CreateMCPServer(t.Context(), srv, limit)
		})
		if ok := countRuleOK(t, fmt.Sprint("round ", r), errs, store.ErrSlotsFull); ok != 2 {
			t.Errorf("round %d: %d creates filled 2 free slots", r, ok)
		}
		srvs, err := stores[1].ListMCPServers(t.Context(), org)
		if err != nil {
			t.Fatalf("ListMCPServers: %v", err)
		}
		if len(srvs) != limit {
			t.Errorf("round %d: %d servers stored, limit %d", r, len(srvs), limit)
		}
	}
}

// TestMCPFamilyRaceAcrossReplicas races, through three Stores, enables of
// disabled web_search servers against creates of enabled ones in one
// organisation: exactly one of all of them succeeds, the rest get
// ErrFamilyInUse, and one web_search server is enabled at the end.
func TestMCPFamilyRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	const enables, creates, rounds = 4, 4, 10
	for r := range rounds {
		org := fmt.Sprint("org-", r)
		for i := range enables {
			srv := raceServer(org, fmt.Sprint("off-", i), store.MCPWebSearch, false)
			if err := stores[0].CreateMCPServer(t.Context(), srv, 0); err != nil {
				t.Fatalf("CreateMCPServer before the race: %v", err)
			}
		}
		errs := raceWriters(enables+creates, func(i int) error {
			s := stores[i%ruleStores]
			if i < enables {
				return s.SetMCPServerEnabled(t.Context(), org, fmt.Sprint("off-", i), true, ruleTime)
			}
			return s.CreateMCPServer(t.Context(), raceServer(org, fmt.Sprint("on-", i), store.MCPWebSearch, true), 0)
		})
		if ok := countRuleOK(t, fmt.Sprint("round ", r), errs, store.ErrFamilyInUse); ok != 1 {
			t.Errorf("round %d: %d of the writers enabled a web_search server, want 1", r, ok)
		}
		on, err := stores[2].ListEnabledMCPServers(t.Context(), org)
		if err != nil {
			t.Fatalf("ListEnabledMCPServers: %v", err)
		}
		if len(on) != 1 {
			t.Errorf("round %d: %d web_search servers enabled, want 1", r, len(on))
		}
	}
}

// TestMCPRewrapRaceAcrossReplicas runs two key rotations at once through
// two Stores, each appending its own mark to every token: both marks end
// up on every token, in one order or the other, so neither rotation's
// write was lost to the other.
func TestMCPRewrapRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	const servers, rounds = 6, 10
	for i := range servers {
		srv := raceServer(fmt.Sprint("org-", i%2), fmt.Sprint("srv-", i), store.MCPGeneral, true)
		if err := stores[0].CreateMCPServer(t.Context(), srv, 0); err != nil {
			t.Fatalf("CreateMCPServer: %v", err)
		}
	}
	for r := range rounds {
		marks := []string{fmt.Sprintf(".a%d", r), fmt.Sprintf(".b%d", r)}
		errs := raceWriters(2, func(i int) error {
			_, err := stores[i].RewrapMCPTokens(t.Context(), func(s store.MCPServer) (string, error) {
				return s.Token + marks[i], nil
			})
			return err
		})
		if ok := countRuleOK(t, fmt.Sprint("round ", r), errs, nil); ok != 2 {
			t.Fatalf("round %d: %d of 2 rotations succeeded", r, ok)
		}
		for _, org := range []string{"org-0", "org-1"} {
			srvs, err := stores[2].ListMCPServers(t.Context(), org)
			if err != nil {
				t.Fatalf("ListMCPServers: %v", err)
			}
			for _, s := range srvs {
				if !strings.HasSuffix(s.Token, marks[0]+marks[1]) && !strings.HasSuffix(s.Token, marks[1]+marks[0]) {
					t.Errorf("round %d: token %q lacks one rotation's mark %q or %q", r, s.Token, marks[0], marks[1])
				}
			}
		}
	}
}

// TestMCPToolNamesPostgresRefuses: a discovered tool name that a
// PostgreSQL text column cannot hold (a NUL byte, invalid UTF-8) is a
// clear error that writes nothing, on SetMCPServerTools and on
// CreateMCPServer.
func TestMCPToolNamesPostgresRefuses(t *testing.T) {
	s := openRuleStores(t)[0]
	srv := raceServer("org", "srv", store.MCPGeneral, true)
	if err := s.CreateMCPServer(t.Context(), srv, 0); err != nil {
		t.Fatalf("CreateMCPServer: %v", err)
	}
	for _, name := range []string{"a\x00b", "bad\xffutf8"} {
		changed, err := s.SetMCPServerTools(t.Context(), srv.OrgID, srv.ID, []string{"ok", name}, ruleTime)
		if changed || err == nil || !strings.Contains(err.Error(), "tool name") {
			t.Errorf("SetMCPServerTools with %q = %v, %v; want false and an error naming the tool name", name, changed, err)
		}
		bad := raceServer("org", "bad", store.MCPGeneral, false)
		bad.Tools = []string{name}
		if err := s.CreateMCPServer(t.Context(), bad, 0); err == nil || !strings.Contains(err.Error(), "tool name") {
			t.Errorf("CreateMCPServer with tool %q: err = %v, want an error naming the tool name", name, err)
		}
	}
	got, err := s.ListMCPServers(t.Context(), srv.OrgID)
	if err != nil {
		t.Fatalf("ListMCPServers: %v", err)
	}
	if len(got) != 1 || got[0].Tools != nil || !got[0].DiscoveredAt.IsZero() {
		t.Errorf("servers after refused writes = %+v, want srv alone, never discovered", got)
	}
}

// TestIntentTriggerLimitRaceAcrossReplicas races 10 adds through three
// Stores for the last two places of a target, next to adds for another
// target: exactly two fill the places, the rest get ErrTriggerLimit, and
// the other target's adds all succeed.
func TestIntentTriggerLimitRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	const limit, writers, rounds = 4, 10, 10
	for r := range rounds {
		org := fmt.Sprint("org-", r)
		for i := range limit - 2 {
			tr := store.IntentTrigger{OrgID: org, Target: "search", Phrase: fmt.Sprint("old ", i), CreatedAt: ruleTime}
			if err := stores[0].AddIntentTrigger(t.Context(), tr, limit); err != nil {
				t.Fatalf("AddIntentTrigger before the race: %v", err)
			}
		}
		errs := raceWriters(writers, func(i int) error {
			tr := store.IntentTrigger{OrgID: org, Target: "search", Phrase: fmt.Sprint("new ", i), CreatedAt: ruleTime}
			return stores[i%ruleStores].AddIntentTrigger(t.Context(), tr, limit)
		})
		others := raceWriters(limit, func(i int) error {
			tr := store.IntentTrigger{OrgID: org, Target: "image", Phrase: fmt.Sprint("other ", i), CreatedAt: ruleTime}
			return stores[i%ruleStores].AddIntentTrigger(t.Context(), tr, limit)
		})
		if ok := countRuleOK(t, fmt.Sprint("round ", r), errs, store.ErrTriggerLimit); ok != 2 {
			t.Errorf("round %d: %d adds filled 2 free places", r, ok)
		}
		if ok := countRuleOK(t, fmt.Sprint("round ", r, ", other target"), others, nil); ok != limit {
			t.Errorf("round %d: %d of %d adds to another target succeeded", r, ok, limit)
		}
		trs, err := stores[1].ListIntentTriggers(t.Context(), org)
		if err != nil {
			t.Fatalf("ListIntentTriggers: %v", err)
		}
		if len(trs) != 2*limit {
			t.Errorf("round %d: %d triggers stored, want %d", r, len(trs), 2*limit)
		}
	}
}

// TestOpenTargetsRaceAcrossReplicas opens overlapping targets in one
// conversation from 9 writers and 3 readers through three Stores: every
// answer is a prefix of the final list, the final list holds each target
// once, and the stored positions run 0, 1, 2, … without a gap.
func TestOpenTargetsRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	pool := []string{"search", "image", "voice", "memory", "files", "calculator", "media"}
	const writers, readers, rounds = 9, 3, 10
	for r := range rounds {
		conv := fmt.Sprint("conv-", r)
		got := make([][]string, writers+readers)
		errs := raceWriters(writers+readers, func(i int) error {
			var targets []string
			if i < writers {
				targets = []string{pool[i%len(pool)], pool[(i+3)%len(pool)]}
			}
			var err error
			got[i], err = stores[i%ruleStores].OpenIntentTargets(t.Context(), "org", conv, targets)
			return err
		})
		countRuleOK(t, fmt.Sprint("round ", r), errs, nil)
		final, err := stores[0].OpenIntentTargets(t.Context(), "org", conv, nil)
		if err != nil {
			t.Fatalf("OpenIntentTargets: %v", err)
		}
		if !slices.Equal(slices.Sorted(slices.Values(final)), slices.Sorted(slices.Values(pool))) {
			t.Errorf("round %d: final targets %q, want each of %q once", r, final, pool)
		}
		for i, answer := range got {
			if len(answer) > len(final) || !slices.Equal(answer, final[:len(answer)]) {
				t.Errorf("round %d, caller %d: answer %q is not a prefix of the final %q", r, i, answer, final)
			}
		}
		var positions []int
		rows, err := stores[1].pool.Query(t.Context(),
			`SELECT position FROM conversation_intent_targets WHERE org_id = 'org' AND conversation_id = $1 ORDER BY position`, conv)
		if err != nil {
			t.Fatalf("read positions: %v", err)
		}
		for rows.Next() {
			var p int
			if err := rows.Scan(&p); err != nil {
				t.Fatalf("scan position: %v", err)
			}
			positions = append(positions, p)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read positions: %v", err)
		}
		for i, p := range positions {
			if p != i {
				t.Errorf("round %d: positions %v, want 0 to %d", r, positions, len(positions)-1)
				break
			}
		}
	}
}

// seedRuleOrg stores an organisation with a plain INSERT: settings need one,
// and these tests need nothing else of the accounts repository.
func seedRuleOrg(t *testing.T, s *Store, id string) {
	t.Helper()
	if _, err := s.pool.Exec(t.Context(), `INSERT INTO orgs (id, name, created_at) VALUES ($1, $1, $2)`, id, ruleTime); err != nil {
		t.Fatalf("insert organisation %s: %v", id, err)
	}
}

// raceSettingsDoc returns writer i's save over version in org.
func raceSettingsDoc(org string, version int64, i int) store.OrgSettings {
	return store.OrgSettings{
		OrgID:     org,
		Doc:       fmt.Appendf(nil, `{"writer": %d, "over": %d}`, i, version),
		Secrets:   map[string]string{"shared": fmt.Sprint("v1.shared.", i), fmt.Sprint("only-", i): "v1.mine"},
		Version:   version,
		UpdatedAt: ruleTime,
	}
}

// TestSettingsVersionRaceAcrossReplicas races 6 saves over one version
// through three Stores, the first save (version 0, no row yet) included,
// round after round: exactly one wins, whole (its document and only its
// secrets), and every other one gets ErrConflict.
func TestSettingsVersionRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	seedRuleOrg(t, stores[0], "org")
	const writers, rounds = 6, 10
	for version := int64(0); version < rounds; version++ {
		var versions [writers]int64
		errs := raceWriters(writers, func(i int) error {
			var err error
			versions[i], err = stores[i%ruleStores].PutOrgSettings(t.Context(), raceSettingsDoc("org", version, i))
			return err
		})
		if ok := countRuleOK(t, fmt.Sprint("over version ", version), errs, store.ErrConflict); ok != 1 {
			t.Fatalf("over version %d: %d saves won, want 1", version, ok)
		}
		won := slices.IndexFunc(errs, func(err error) bool { return err == nil })
		if versions[won] != version+1 {
			t.Errorf("over version %d: the winner got version %d", version, versions[won])
		}
		got, err := stores[(won+1)%ruleStores].GetOrgSettings(t.Context(), "org")
		if err != nil {
			t.Fatalf("GetOrgSettings: %v", err)
		}
		want := raceSettingsDoc("org", version, won)
		if got.Version != version+1 || string(got.Doc) != string(want.Doc) || !maps.Equal(got.Secrets, want.Secrets) {
			t.Errorf("over version %d: stored %+v, want writer %d's save %+v at version %d", version, got, won, want, version+1)
		}
	}
}

// TestSettingsRewrapRaceAcrossReplicas races saves over the version read
// against a key rotation, and two rotations against each other, through
// separate Stores. Whichever commits first, no secret sealed under the
// old key survives: a save that commits first is rewrapped by the
// rotation, one that comes second gets ErrConflict; and both rotations'
// marks end up on every secret, once each, with the version bumped once
// per rotation.
func TestSettingsRewrapRaceAcrossReplicas(t *testing.T) {
	stores := openRuleStores(t)
	const rounds = 10
	orgs := []string{"org-a", "org-b"}
	for _, org := range orgs {
		seedRuleOrg(t, stores[0], org)
		if _, err := stores[0].PutOrgSettings(t.Context(), raceSettingsDoc(org, 0, 0)); err != nil {
			t.Fatalf("PutOrgSettings: %v", err)
		}
	}
	for r := range rounds {
		read := make(map[string]store.OrgSettings)
		for _, org := range orgs {
			var err error
			if read[org], err = stores[0].GetOrgSettings(t.Context(), org); err != nil {
				t.Fatalf("GetOrgSettings: %v", err)
			}
		}
		marks := []string{fmt.Sprintf(".a%d", r), fmt.Sprintf(".b%d", r)}
		// Writers 0 and 1 rotate; 2 and 3 save, one organisation each,
		// secrets as read: under the old key.
		errs := raceWriters(4, func(i int) error {
			if i < 2 {
				_, err := stores[i].RewrapOrgSecrets(t.Context(), func(_, _, sealed string) (string, error) {
					return sealed + marks[i], nil
				})
				return err
			}
			save := read[orgs[i-2]]
			save.Doc = fmt.Appendf(nil, `{"round": %d}`, r)
			_, err := stores[2].PutOrgSettings(t.Context(), save)
			return err
		})
		if ok := countRuleOK(t, fmt.Sprint("round ", r, ", rotations"), errs[:2], nil); ok != 2 {
			t.Fatalf("round %d: %d of 2 rotations succeeded", r, ok)
		}
		countRuleOK(t, fmt.Sprint("round ", r, ", saves"), errs[2:], store.ErrConflict)
		for j, org := range orgs {
			got, err := stores[1].GetOrgSettings(t.Context(), org)
			if err != nil {
				t.Fatalf("GetOrgSettings: %v", err)
			}
			wantVersion := read[org].Version + 2
			if errs[2+j] == nil {
				wantVersion++
			}
			if got.Version != wantVersion {
				t.Errorf("round %d, %s: version %d, want %d (save err %v)", r, org, got.Version, wantVersion, errs[2+j])
			}
			for name, sealed := range got.Secrets {
				old := read[org].Secrets[name]
				if sealed != old+marks[0]+marks[1] && sealed != old+marks[1]+marks[0] {
					t.Errorf("round %d, %s: secret %q is %q, want %q with both marks once", r, org, name, sealed, old)
				}
			}
		}
	}
}
