package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// This file checks EraseUser: a person erased leaves nothing any
// repository answers with, while everyone else's data, and what the
// organisation spent, stay as they were.

// userEraseCases checks EraseUser.
func userEraseCases() []suiteCase {
	return []suiteCase{
		{"UserErase", testUserErase},
		{"UserEraseRefused", testUserEraseRefused},
		{"UserEraseLastAdmin", testUserEraseLastAdmin},
	}
}

// SeededUser names the records SeedUser wrote for one person.
type SeededUser struct {
	User          store.User
	Conversations []Seeded
	Credentials   []store.Credential
	MemoryID      string
	BlobID        string
	// LooseTurnID is the turn of a usage record outside any conversation,
	// in May 2025 (the conversations' records are in April).
	LooseTurnID string
}

// Months the seeds' usage records fall in.
var seedMonths = []time.Time{
	time.Date(2025, time.April, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2025, time.May, 1, 0, 0, 0, 0, time.UTC),
}

// SeedUser creates the member userID in orgID (which must exist) and
// writes, through the repositories, one record of every kind a person
// holds: a credential of every kind, two conversations (SeedConversation),
// a personal memory, a blob in no conversation, their Deliberate Tool
// Mode, their own budget and a usage record of another month. tag makes
// the IDs unique.
func SeedUser(t *testing.T, st store.Store, orgID, userID, tag string) SeededUser {
	t.Helper()
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seed user %s: %s: %v", userID, what, err)
		}
	}
	start := time.Date(2025, time.April, 1, 9, 0, 0, 0, time.UTC)
	s := SeededUser{User: newUser(orgID, userID), MemoryID: "mem-" + tag, BlobID: "file-" + tag, LooseTurnID: "loose-" + tag}
	for _, kind := range []string{store.CredAPIToken, store.CredSession, store.CredLoginLink} {
		sum := sha256.Sum256([]byte(kind + "/" + orgID + "/" + tag))
		s.Credentials = append(s.Credentials, store.Credential{Hash: hex.EncodeToString(sum[:]), Kind: kind,
			OrgID: orgID, UserID: userID, CreatedAt: start})
	}
	must("create user", st.CreateUser(ctx, s.User, s.Credentials...))
	for _, c := range []string{"a", "b"} {
		s.Conversations = append(s.Conversations, SeedConversation(t, st, orgID, userID, "conv-"+c+"-"+tag, c+"-"+tag))
	}
	text := "remembered fact of " + tag
	_, err := st.PutMemory(ctx, store.Memory{OrgID: orgID, ID: s.MemoryID, OwnerID: userID, Text: text,
		CreatedAt: start, Model: localModel, Vector: localVector(t, text)}, 0)
	must("memory", err)
	_, err = st.PutBlob(ctx, store.Blob{OrgID: orgID, ID: s.BlobID, OwnerID: userID, Name: "own.txt",
		MediaType: "text/plain", CreatedAt: start, Data: []byte("own file of " + tag)}, store.BlobQuota{})
	must("blob", err)
	must("intent mode", st.SetUserIntentMode(ctx, orgID, userID, "on"))
	must("block", st.BlockUser(ctx, store.Block{OrgID: orgID, Agent: "assistant", UserID: userID, Reason: "spam of " + tag, By: "agent", CreatedAt: start}))
	must("budget", st.PutBudget(ctx, store.Budget{OrgID: orgID, UserID: userID, CostMicros: 5_000, Tokens: 9_000, UpdatedAt: start}))
	must("usage", st.PutUsage(ctx, store.Usage{OrgID: orgID, TurnID: s.LooseTurnID, Payer: orgID, UserID: userID,
		Model: "openai:gpt-4.1", Step: 1, InputTokens: 7, OutputTokens: 3, CostMicros: 11, CreatedAt: seedMonths[1].Add(time.Hour)}))
	return s
}

// userView is what the repositories answer about a seeded person.
type userView struct {
	User          store.User
	Conversations []store.Conversation
	Views         []conversationView
	Credentials   [][]store.Credential
	Memories      []store.Memory
	Found         []store.Memory
	Vectors       []string
	Blobs         []store.Blob
	BlobUsage     store.BlobUsage
	Mode          string
	Budget        store.Budget
	Spend         []store.UsageTotal
	Loose         []store.Usage
}

// viewUser reads everything of s through the repositories, failing the
// test on an error other than not found.
func (f *fixture) viewUser(t *testing.T, s SeededUser) userView {
	t.Helper()
	ctx, org, id := t.Context(), s.User.OrgID, s.User.ID
	var v userView
	var errs []error
	keep := func(err error) {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	var err error
	v.User, err = f.GetUser(ctx, org, id)
	keep(err)
	v.Conversations, err = f.ListConversations(ctx, org, id, 0)
	keep(err)
	for _, c := range s.Conversations {
		v.Views = append(v.Views, f.view(t, c))
	}
	for _, c := range s.Credentials {
		cs, err := f.ListCredentials(ctx, org, id, c.Kind)
		keep(err)
		v.Credentials = append(v.Credentials, cs)
	}
	list, err := f.ListMemories(ctx, org, id, store.MemoryPage{})
	keep(err)
	v.Memories = list.Memories
	v.Found, err = f.SearchMemories(ctx, store.MemorySearch{OrgID: org, OwnerID: id, Text: "remembered fact"})
	keep(err)
	cands, err := f.MemoryVectors(ctx, org, id, localModel)
	keep(err)
	for _, c := range cands {
		v.Vectors = append(v.Vectors, c.ID)
	}
	blobs, err := f.ListOwnerBlobs(ctx, org, id, store.BlobPage{})
	keep(err)
	v.Blobs = blobs.Blobs
	v.BlobUsage, err = f.BlobUsage(ctx, org, id)
	keep(err)
	v.Mode, err = f.GetUserIntentMode(ctx, org, id)
	keep(err)
	limits, err := f.BudgetLimits(ctx, org, id)
	keep(err)
	v.Budget = limits.User
	for _, m := range seedMonths {
		sp, err := f.MonthSpend(ctx, org, id, m)
		keep(err)
		v.Spend = append(v.Spend, sp)
	}
	v.Loose, err = f.ListUsage(ctx, org, s.LooseTurnID)
	keep(err)
	if len(errs) > 0 {
		t.Fatalf("reading user %s: %v", id, errors.Join(errs...))
	}
	return v
}

// orgSpend is MonthSpend of the whole organisation in each seed month.
func (f *fixture) orgSpend(t *testing.T, org string) []store.UsageTotal {
	t.Helper()
	var out []store.UsageTotal
	for _, m := range seedMonths {
		sp, err := f.MonthSpend(t.Context(), org, "", m)
		if err != nil {
			t.Fatalf("MonthSpend: %v", err)
		}
		out = append(out, sp)
	}
	return out
}

// testUserErase seeds two people of one organisation and one of
// another with the first one's ID, and a shared memory, erases the first
// and checks that nothing of theirs answers, that their usage stays
// detached (the organisation's month spend unchanged), and that the
// others' data and the shared memory are as they were.
func testUserErase(t *testing.T, f *fixture) {
	ctx := t.Context()
	org, other := f.createOrg(t, "org"), f.createOrg(t, "other-org")
	ana := SeedUser(t, f.Store, org, "ana", f.id("a"))
	bo := SeedUser(t, f.Store, org, "bo", f.id("b"))
	twin := SeedUser(t, f.Store, other, "ana", f.id("c"))
	shared := f.newMemory(t, "shared", "", "remembered fact everyone shares")
	shared.OrgID = org
	if _, err := f.PutMemory(ctx, shared, 0); err != nil {
		t.Fatalf("PutMemory shared: %v", err)
	}
	boBefore, twinBefore := f.viewUser(t, bo), f.viewUser(t, twin)
	anaBefore, spentBefore := f.viewUser(t, ana), f.orgSpend(t, org)
	if anaBefore.Spend[0].CostMicros != 84 || anaBefore.Spend[1].CostMicros != 11 {
		t.Fatalf("the seed's spend of ana: %+v, want 84 in April and 11 in May", anaBefore.Spend)
	}

	if err := f.EraseUser(ctx, org, "ana"); err != nil {
		t.Fatalf("EraseUser: %v", err)
	}
	v := f.viewUser(t, ana)
	wantNotFound(t, "GetUser of the erased user", func() error { _, err := f.GetUser(ctx, org, "ana"); return err }())
	if len(v.Conversations) > 0 || len(v.Memories) > 0 || len(v.Blobs) > 0 || v.BlobUsage != (store.BlobUsage{}) {
		t.Errorf("after the erase the repositories still answer: conversations %+v, memories %+v, blobs %+v (%+v)",
			v.Conversations, v.Memories, v.Blobs, v.BlobUsage)
	}
	for _, cs := range v.Credentials {
		if len(cs) > 0 {
			t.Errorf("credentials after the erase: %+v", cs)
		}
	}
	for _, c := range v.Views {
		if c.Conversation.ID != "" || len(c.Messages) > 0 || c.Turn.ID != "" || len(c.Events) > 0 ||
			c.Result.Ref != "" || len(c.Targets) > 0 || len(c.Blobs) > 0 || len(c.Attachments) > 0 || len(c.Hits) > 0 || len(c.Found) > 0 {
			t.Errorf("a conversation of the erased user still answers: %+v", c)
		}
		if len(c.Usage) != 1 || c.Usage[0].UserID != "" || c.Usage[0].ConversationID != "" || c.Usage[0].CostMicros != 42 {
			t.Errorf("usage of an erased conversation: %+v, want its one record, detached", c.Usage)
		}
	}
	if _, err := f.GetMemory(ctx, org, "ana", ana.MemoryID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetMemory of the erased user's memory: %v, want not found", err)
	}
	if _, err := f.GetBlob(ctx, org, ana.BlobID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetBlob of the erased user's file: %v, want not found", err)
	}
	if d := diff([]string{shared.ID}, v.Vectors); d != "" {
		t.Errorf("MemoryVectors after the erase, want the shared memory only (-want +got):\n%s", d)
	}
	if len(v.Found) != 1 || v.Found[0].ID != shared.ID {
		t.Errorf("SearchMemories after the erase: %+v, want the shared memory only", v.Found)
	}
	if v.Mode != "follow" || !v.Budget.Unlimited() {
		t.Errorf("after the erase: intent mode %q, budget %+v; want follow and none", v.Mode, v.Budget)
	}
	if d := diff([]store.UsageTotal{{}, {}}, v.Spend); d != "" {
		t.Errorf("the erased user's month spend (-want +got):\n%s", d)
	}
	if len(v.Loose) != 1 || v.Loose[0].UserID != "" || v.Loose[0].Payer != org || v.Loose[0].CostMicros != 11 {
		t.Errorf("usage outside a conversation after the erase: %+v, want it kept, detached", v.Loose)
	}
	if d := diff(spentBefore, f.orgSpend(t, org)); d != "" {
		t.Errorf("the organisation's month spend changed (-before +after):\n%s", d)
	}
	if d := diff(boBefore, f.viewUser(t, bo)); d != "" {
		t.Errorf("the other user of the organisation changed (-before +after):\n%s", d)
	}
	if d := diff(twinBefore, f.viewUser(t, twin)); d != "" {
		t.Errorf("the same user ID in another organisation changed (-before +after):\n%s", d)
	}
	if _, err := f.GetMemory(ctx, org, "", shared.ID); err != nil {
		t.Errorf("GetMemory of the shared memory after the erase: %v", err)
	}
	wantNotFound(t, "EraseUser again", f.EraseUser(ctx, org, "ana"))
}

// testUserEraseRefused: an unknown user is ErrNotFound, and a person
// with a run held, in one of their conversations (lease passed or not)
// or in one not stored yet, ErrTurnRunning; none erases anything, and
// once the runs end the erase goes through.
func testUserEraseRefused(t *testing.T, f *fixture) {
	ctx := t.Context()
	org := f.createOrg(t, "org")
	ana := SeedUser(t, f.Store, org, "ana", f.id("a"))
	wantNotFound(t, "EraseUser of an unknown user", f.EraseUser(ctx, org, "nobody"))
	wantNotFound(t, "EraseUser in another organisation", f.EraseUser(ctx, f.id("other-org"), "ana"))
	conv := ana.Conversations[1].Conversation.ID
	f.claimRun(t, store.Run{OrgID: org, ConversationID: conv, TurnID: "running", UserID: "ana",
		Replica: f.id("replica"), StartedAt: at(0), ExpiresAt: at(1)})
	before := f.viewUser(t, ana)
	wantErrIs(t, "EraseUser while a run is held", f.EraseUser(ctx, org, "ana"), store.ErrTurnRunning)
	if d := diff(before, f.viewUser(t, ana)); d != "" {
		t.Errorf("a refused erase changed the user (-before +after):\n%s", d)
	}
	if err := f.EndRun(ctx, org, conv, "running", at(2)); err != nil {
		t.Fatalf("EndRun: %v", err)
	}
	// A turn of theirs starting a conversation not stored yet.
	fresh := f.id("fresh")
	f.claimRun(t, store.Run{OrgID: org, ConversationID: fresh, TurnID: "starting", UserID: "ana",
		Replica: f.id("replica"), StartedAt: at(3), ExpiresAt: at(4)})
	wantErrIs(t, "EraseUser while a run of a new conversation is held", f.EraseUser(ctx, org, "ana"), store.ErrTurnRunning)
	if d := diff(before, f.viewUser(t, ana)); d != "" {
		t.Errorf("a refused erase changed the user (-before +after):\n%s", d)
	}
	if err := f.EndRun(ctx, org, fresh, "starting", at(5)); err != nil {
		t.Fatalf("EndRun: %v", err)
	}
	if err := f.EraseUser(ctx, org, "ana"); err != nil {
		t.Fatalf("EraseUser after the run ended: %v", err)
	}
}

// testUserEraseLastAdmin: the organisation's last enabled admin is
// ErrLastAdmin, erasing nobody; any other user, admin or not, is erased.
func testUserEraseLastAdmin(t *testing.T, f *fixture) {
	for _, tc := range adminCases() {
		t.Run(tc.name, func(t *testing.T) {
			org, users := f.setupAdmins(t, tc)
			wantErrIs(t, "EraseUser", f.EraseUser(t.Context(), org, tc.target), tc.want)
			var want []store.User
			for _, u := range users {
				if tc.want != nil || u.ID != tc.target {
					want = append(want, u)
				}
			}
			wantUsers(t, "ListUsers after EraseUser", want, f.listUsers(t, org))
		})
	}
}
