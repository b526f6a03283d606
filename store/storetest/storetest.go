// Package storetest is the conformance suite for implementations of
// store.Store. Every implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { ... })
//	}
//
// The suite checks the contract written on the store interfaces, plus what
// Quiver relies on beyond it: organisation scoping never reveals a record,
// times come back in UTC with at least millisecond precision (a zero
// Turn.EndedAt as zero), toolset order survives, Seqs are positive and
// increasing under concurrent appends (single and batched, batches
// spanning conversations in either order), message content and result
// bodies come back byte for byte (a NUL and invalid UTF-8 included), an
// MCP server's nil and empty Tools
// stay distinct, as do a turn's nil and empty Excluded (and Declared), a turn's
// exclusions are kept in order and bounded as store.BoundExclusions says
// (the bounds' values are checked too), a user intent mode other than off, follow and on is
// refused, every answer of concurrent OpenIntentTargets calls is a prefix
// of the conversation's final list, a credential stops working at its
// ExpiresAt (not an instant later), ModifyUser and PutAgent stamp the
// UpdatedAt they are given, CreateUser stores DisabledAt as given while
// ModifyUser leaves it alone, concurrent ModifyUser calls never lose one
// another's edits, DisableUser changes nothing but DisabledAt
// (and the user's credentials), EnableUser nothing but DisabledAt and
// UpdatedAt (and restores no credential), and a saved settings document
// comes back byte for byte, and the deployment's keyring check is
// replaced only over the value stored (exactly one of concurrent first
// sets wins). The suite creates the organisation of every
// settings save and the user of every credential first, so a store may
// require them. Runs and turn events are checked under concurrent writers
// too: claims of one conversation give it to exactly one, concurrent
// reapers return each expired run once, eight appends of one Seq store
// one, and a wait never misses an append made while it starts; rate
// buckets too: sixteen takers of one key are granted exactly the tokens
// it holds; and stored results: sixteen puts into one conversation leave
// exactly the newest bodies that fit its quota, the rest evicted.
// Conversations: titles are kept cleaned (store.CleanTitle) however they
// are written; search matches titles and user messages only, folded
// (case, NFC) alike on every backend, with LIKE's wildcards literal, and
// pages by cursor without a gap or a repeat; a delete leaves nothing a
// repository answers with, keeps usage detached, refuses while a run is
// held and spares other users and organisations. Branches: each turn
// keeps the parent it was first written with, a parent outside the
// conversation and a sibling past store.MaxSiblings refuse the whole
// write, and the head moves only to a turn of the owner's conversation
// while no run is held. Memories: a person reaches only their own, and
// searches (by text and by vector) see theirs and their organisation's
// shared ones, never another person's or organisation's; updates and
// deletes reach the full-text index and the vectors; any search text is
// words, never query syntax; the per-owner cap holds under concurrent
// puts. Short-term memories: one per thread, replaced whole, a blank
// text deletes it, one over store.MaxShortTermRunes is refused with the
// stored one untouched, other threads and organisations never see it, and
// deleting the conversation it was written in deletes it.
//
// Budgets: one per organisation and UserID (a person, the organisation
// or the default), replaced whole,
// an unlimited one deleted, invalid ones refused leaving the stored one;
// a person is held to their own, else the default; usage sums by person
// and by organisation count exactly their window.
//
// Attachments: a conversation reaches only its own files, by every
// read, search and delete; quotas refuse before writing, concurrent puts
// included; deleting the conversation deletes its files.
//
// Artifacts: a conversation reaches only its own, by every read, change
// and delete; a change computed from a state that is no longer there is
// refused; a visual artifact's draft saves only when inspected since its
// last change; every bound (content, title, count, bytes, versions)
// refuses before writing, concurrent creates included; deleting the
// conversation deletes them.
//
// Erasing a user: nothing of theirs answers from any repository, their
// usage stays detached and the organisation's month spend unchanged, and
// the others' data is untouched; a run held or the last admin refuses.
//
// Three checks need a backend's own SQL besides its store, so a backend's
// tests run them beside Run: DeleteLeavesNoRow looks in every table for
// what a conversation delete left, EraseLeavesNoRow for what erasing a
// user left, and RunUpgrades writes rows as older
// builds did (Upgrades) and checks what the migrations made of them.
package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quiverhq/quiver/store"
)

// Run runs the suite as named subtests of t (Turns/RoundTrip, ...), in
// parallel with each other, except the checks that count rows in every
// organisation, which run alone. open is called once per subtest with that
// subtest's t and returns a store to test; it may return a new store or one
// shared between calls (the suite uses identifiers unique to the run and
// subtest, so it needs no empty database, only no writer outside the suite
// while a check that runs alone does). Run never calls Close: open
// registers any cleanup with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	run := newRunID(t)
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			// A check that does not call t.Parallel runs at once, while
			// the parallel ones wait for the group's function to return,
			// and groups run one after another: so it runs alone.
			for _, c := range g.alone {
				t.Run(c.name, func(t *testing.T) {
					c.test(t, &fixture{Store: open(t), prefix: run + "-" + t.Name()})
				})
			}
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.test(t, &fixture{Store: open(t), prefix: run + "-" + t.Name()})
				})
			}
		})
	}
}

// group is the checks of one repository or concern.
type group struct {
	name  string
	cases []suiteCase
	// alone are checks that must run while no other check does, because
	// they count rows in every organisation.
	alone []suiteCase
}

// suiteCase is one named conformance check.
type suiteCase struct {
	name string
	test func(t *testing.T, f *fixture)
}

// groups lists every check.
func groups() []group {
	return []group{
		{name: "Conversations", cases: conversationCases()},
		{name: "Turns", cases: turnCases(), alone: turnAloneCases()},
		{name: "TurnWrites", cases: turnWriteCases()},
		{name: "Branches", cases: branchCases()},
		{name: "Messages", cases: messageCases()},
		{name: "MessageMarks", cases: messageMarkCases()},
		{name: "Results", cases: resultCases()},
		{name: "Usage", cases: usageCases()},
		{name: "Budgets", cases: budgetCases()},
		{name: "MCPServers", cases: mcpServerCases(), alone: mcpServerAloneCases()},
		{name: "Intents", cases: intentCases()},
		{name: "Accounts", cases: slices.Concat(accountCases(), userModifyCases(), userCreateCases(), userDisableCases(), userEnableCases(), userEraseCases()), alone: accountAloneCases()},
		{name: "Agents", cases: agentCases()},
		{name: "Settings", cases: settingsCases(), alone: settingsAloneCases()},
		{name: "Context", cases: contextCases()},
		{name: "Blobs", cases: blobCases()},
		{name: "Attachments", cases: attachmentCases()},
		{name: "Artifacts", cases: artifactCases()},
		{name: "Memories", cases: memoryCases()},
		{name: "ShortTerms", cases: shortTermCases()},
		{name: "Knowledge", cases: knowledgeCases()},
		{name: "Skills", cases: skillCases()},
		{name: "Tasks", cases: taskCases(), alone: taskAloneCases()},
		{name: "Leases", cases: leaseCases()},
		{name: "Blocks", cases: blockCases()},
		{name: "History", cases: historyCases()},
		{name: "KeyChecks", alone: keyCheckAloneCases()},
		{name: "Runs", cases: runCases(), alone: runAloneCases()},
		{name: "Events", cases: eventCases()},
		{name: "RateLimits", cases: rateLimitCases(), alone: rateLimitAloneCases()},
	}
}

// fixture is a store under test and the identifiers a subtest may use.
type fixture struct {
	store.Store
	prefix string
}

// id returns an identifier unique to this run and subtest, such as an
// organisation or conversation ID.
func (f *fixture) id(name string) string { return f.prefix + "/" + name }

// sub is f for a subtest of its own: the same store, identifiers apart.
func (f *fixture) sub(name string) *fixture {
	return &fixture{Store: f.Store, prefix: f.prefix + "/" + name}
}

// newRunID returns a random tag so that a store shared across runs (a
// persistent PostgreSQL database) never sees the same identifiers twice.
func newRunID(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("run id: %v", err)
	}
	return hex.EncodeToString(b)
}

// at is a fixed instant with millisecond precision (the least a store must
// keep) in a zone other than UTC, so that a store returning the caller's
// zone, or dropping the offset, is caught.
func at(minute int) time.Time {
	zone := time.FixedZone("UTC+5:30", 5*3600+30*60)
	return time.Date(2025, time.March, 30, 1, minute, 7, 123_000_000, zone)
}

// diff compares records: times by instant (cmp uses time.Time.Equal) and
// an empty toolset as equal to a nil one.
func diff(want, got any) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

// wantUTC fails unless every time is in UTC.
func wantUTC(t *testing.T, what string, times ...time.Time) {
	t.Helper()
	for _, tm := range times {
		if tm.Location() != time.UTC {
			t.Errorf("%s: time %v is in %v, want UTC", what, tm, tm.Location())
		}
	}
}

// wantNotFound fails unless err wraps store.ErrNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: err = %v, want store.ErrNotFound", what, err)
	}
}
