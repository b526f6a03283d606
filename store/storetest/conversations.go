package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// conversationCases checks the Conversations repository.
func conversationCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testConversationRoundTrip},
		{"Replace", testConversationReplace},
		{"NotFound", testConversationNotFound},
		{"SameIDInOtherOrg", testConversationSameIDInOtherOrg},
		{"ListScoped", testConversationListScoped},
		{"ListOrderAndLimit", testConversationListOrderAndLimit},
		{"ClaimCreates", testConversationClaimCreates},
		{"ClaimKeepsOwnerAndTitle", testConversationClaimKeepsOwnerAndTitle},
		{"ClaimConcurrent", testConversationClaimConcurrent},
		{"ClaimKeepsModel", testConversationClaimKeepsModel},
		{"TitleCleaned", testConversationTitleCleaned},
		{"Update", testConversationUpdate},
		{"UpdateOthers", testConversationUpdateOthers},
		{"FindHidesEmpty", testConversationFindHidesEmpty},
		{"FindText", testConversationFindText},
		{"FindTextFolded", testConversationFindTextFolded},
		{"FindTextLiteral", testConversationFindTextLiteral},
		{"FindTextScoped", testConversationFindTextScoped},
		{"FindTitleFollowsRename", testConversationFindTitleFollowsRename},
		{"FindPages", testConversationFindPages},
		{"Delete", testConversationDelete},
		{"DeleteOthers", testConversationDeleteOthers},
		{"DeleteRunning", testConversationDeleteRunning},
		{"DeleteThenReuse", testConversationDeleteThenReuse},
	}
}

// newConversation returns a conversation with every field set, owned by
// user in org.
func (f *fixture) newConversation(org, id, user string) store.Conversation {
	return store.Conversation{
		ID:        f.id(id),
		OrgID:     f.id(org),
		UserID:    f.id(user),
		Agent:     "assistant",
		Title:     "Flights to Zürich",
		CreatedAt: at(10),
		UpdatedAt: at(20),
	}
}

// putConversation stores c, failing the test on error.
func (f *fixture) putConversation(t *testing.T, c store.Conversation) {
	t.Helper()
	if err := f.PutConversation(t.Context(), c); err != nil {
		t.Fatalf("PutConversation %s: %v", c.ID, err)
	}
}

// listConversations returns ListConversations' answer, failing the test on
// error.
func (f *fixture) listConversations(t *testing.T, org, user string, limit int) []store.Conversation {
	t.Helper()
	got, err := f.ListConversations(t.Context(), org, user, limit)
	if err != nil {
		t.Fatalf("ListConversations(limit %d): %v", limit, err)
	}
	return got
}

func testConversationRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Conversation)
	}{
		{"AllFields", func(*store.Conversation) {}},
		{"EmptyTitle", func(c *store.Conversation) { c.Title = "" }},
		{"Unicode", func(c *store.Conversation) { c.Title, c.Agent = "«ß» 'quote\" 🙂 Đà Nẵng", "agent ñ" }},
		{"Model", func(c *store.Conversation) { c.Model = "ollama:qwen3:8b" }},
		{"ZeroFields", func(c *store.Conversation) {
			*c = store.Conversation{ID: c.ID, OrgID: c.OrgID}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := f.newConversation("org", tc.name, "user")
			tc.edit(&want)
			f.putConversation(t, want)
			got, err := f.GetConversation(t.Context(), want.OrgID, want.ID)
			if err != nil {
				t.Fatalf("GetConversation: %v", err)
			}
			if d := diff(want, got); d != "" {
				t.Errorf("GetConversation mismatch (-want +got):\n%s", d)
			}
			wantUTC(t, "CreatedAt, UpdatedAt", got.CreatedAt, got.UpdatedAt)
		})
	}
}

// testConversationReplace puts a conversation twice and checks that the
// second replaces the first, in Get and in List, without a duplicate.
func testConversationReplace(t *testing.T, f *fixture) {
	first := f.newConversation("org", "conv", "user")
	f.putConversation(t, first)
	second := first
	second.Title, second.Agent, second.UpdatedAt = "Renamed", "planner", at(25)
	f.putConversation(t, second)
	got, err := f.GetConversation(t.Context(), first.OrgID, first.ID)
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	if d := diff(second, got); d != "" {
		t.Errorf("GetConversation after replace (-want +got):\n%s", d)
	}
	list := f.listConversations(t, first.OrgID, first.UserID, 0)
	if d := diff([]store.Conversation{second}, list); d != "" {
		t.Errorf("ListConversations after replace (-want +got):\n%s", d)
	}
}

// testConversationNotFound checks that a conversation is reachable only
// from its own organisation and that the error reveals nothing.
func testConversationNotFound(t *testing.T, f *fixture) {
	c := f.newConversation("org", "conv", "user")
	f.putConversation(t, c)
	tests := []struct{ name, org, id string }{
		{"MissingID", c.OrgID, f.id("missing")},
		{"OtherOrg", f.id("other-org"), c.ID},
		{"EmptyOrg", "", c.ID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.GetConversation(t.Context(), tc.org, tc.id)
			wantNotFound(t, "GetConversation", err)
			if d := diff(store.Conversation{}, got); d != "" {
				t.Errorf("GetConversation revealed a record (-want +got):\n%s", d)
			}
		})
	}
}

// testConversationSameIDInOtherOrg checks that a conversation put in one
// organisation never changes the one with the same ID in another. Whether
// the second put succeeds is the store's choice.
func testConversationSameIDInOtherOrg(t *testing.T, f *fixture) {
	mine := f.newConversation("org", "conv", "user")
	f.putConversation(t, mine)
	theirs := mine
	theirs.OrgID, theirs.Title = f.id("other-org"), "theirs"
	putErr := f.PutConversation(t.Context(), theirs)
	got, err := f.GetConversation(t.Context(), mine.OrgID, mine.ID)
	if err != nil {
		t.Fatalf("GetConversation mine: %v", err)
	}
	if d := diff(mine, got); d != "" {
		t.Errorf("other org's PutConversation changed this org's (-want +got):\n%s", d)
	}
	got, err = f.GetConversation(t.Context(), theirs.OrgID, theirs.ID)
	switch {
	case putErr != nil:
		wantNotFound(t, "GetConversation after refused put", err)
	case err != nil:
		t.Errorf("GetConversation theirs after accepted put: %v", err)
	default:
		if d := diff(theirs, got); d != "" {
			t.Errorf("GetConversation theirs (-want +got):\n%s", d)
		}
	}
}

// testConversationListScoped checks that a user's list holds only that
// user's conversations in that organisation.
func testConversationListScoped(t *testing.T, f *fixture) {
	mine := f.newConversation("org", "mine", "user")
	f.putConversation(t, mine)
	f.putConversation(t, f.newConversation("org", "colleague's", "colleague"))
	f.putConversation(t, f.newConversation("other-org", "elsewhere", "user"))
	tests := []struct {
		name, org, user string
		want            []store.Conversation
	}{
		{"Mine", mine.OrgID, mine.UserID, []store.Conversation{mine}},
		{"OtherOrg", f.id("unknown-org"), mine.UserID, nil},
		{"UnknownUser", mine.OrgID, f.id("stranger"), nil},
		{"EmptyOrg", "", mine.UserID, nil},
		{"EmptyUser", mine.OrgID, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.want, f.listConversations(t, tc.org, tc.user, 0)); d != "" {
				t.Errorf("ListConversations (-want +got):\n%s", d)
			}
		})
	}
}

// testConversationListOrderAndLimit puts conversations in an order that is
// neither their UpdatedAt nor their CreatedAt order, two of them updated at
// the same instant, one in a zone whose local time sorts differently, and
// checks the list is by UpdatedAt descending, then ID, cut at limit.
func testConversationListOrderAndLimit(t *testing.T, f *fixture) {
	west := time.FixedZone("UTC-10", -10*3600)
	updated := []struct {
		id string
		at time.Time
	}{
		{"c-old", at(1)},
		{"c-tie-b", at(9)},
		{"c-west", at(7).In(west)},
		{"c-tie-a", at(9)},
		{"c-mid", at(5)},
	}
	byID := map[string]store.Conversation{}
	for i, u := range updated {
		c := f.newConversation("org", u.id, "user")
		c.CreatedAt, c.UpdatedAt = at(50-i), u.at
		f.putConversation(t, c)
		byID[u.id] = c
	}
	var all []store.Conversation
	for _, id := range []string{"c-tie-a", "c-tie-b", "c-west", "c-mid", "c-old"} {
		all = append(all, byID[id])
	}
	org, user := f.id("org"), f.id("user")
	tests := []struct {
		name  string
		limit int
		want  []store.Conversation
	}{
		{"NoLimit", 0, all},
		{"Negative", -1, all},
		{"One", 1, all[:1]},
		{"Three", 3, all[:3]},
		{"Exact", len(all), all},
		{"Beyond", len(all) + 10, all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.want, f.listConversations(t, org, user, tc.limit)); d != "" {
				t.Errorf("ListConversations(limit %d) (-want +got):\n%s", tc.limit, d)
			}
		})
	}
}

// claim calls ClaimConversation, failing the test on error.
func (f *fixture) claim(t *testing.T, c store.Conversation) store.Conversation {
	t.Helper()
	got, err := f.ClaimConversation(t.Context(), c)
	if err != nil {
		t.Fatalf("ClaimConversation %s: %v", c.ID, err)
	}
	return got
}

// testConversationClaimCreates: a claim of a new ID stores the
// conversation as given and returns it; claiming it again as its owner
// stamps only UpdatedAt.
func testConversationClaimCreates(t *testing.T, f *fixture) {
	c := f.newConversation("org", "conv", "user")
	if d := diff(c, f.claim(t, c)); d != "" {
		t.Errorf("first claim (-want +got):\n%s", d)
	}
	again := c
	again.Title, again.Agent, again.CreatedAt, again.UpdatedAt = "", "other-agent", at(30), at(40)
	want := c
	want.UpdatedAt = at(40)
	if d := diff(want, f.claim(t, again)); d != "" {
		t.Errorf("owner's second claim (-want +got):\n%s", d)
	}
	got, err := f.GetConversation(t.Context(), c.OrgID, c.ID)
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("stored after the claims (-want +got):\n%s", d)
	}
}

// testConversationClaimKeepsOwnerAndTitle: another user's claim returns
// the conversation as it is and changes nothing of it.
func testConversationClaimKeepsOwnerAndTitle(t *testing.T, f *fixture) {
	mine := f.newConversation("org", "conv", "user")
	f.putConversation(t, mine)
	theirs := mine
	theirs.UserID, theirs.Title, theirs.UpdatedAt = f.id("intruder"), "", at(50)
	if d := diff(mine, f.claim(t, theirs)); d != "" {
		t.Errorf("another user's claim (-want +got):\n%s", d)
	}
	got, err := f.GetConversation(t.Context(), mine.OrgID, mine.ID)
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	if d := diff(mine, got); d != "" {
		t.Errorf("stored after another user's claim (-want +got):\n%s", d)
	}
}

// testConversationClaimConcurrent: eight users claim one new ID at once;
// exactly one owns it, and every claim answers with that owner.
func testConversationClaimConcurrent(t *testing.T, f *fixture) {
	base := f.newConversation("org", "conv", "user")
	const claimers = 8
	owners := make([]string, claimers)
	errs := make([]error, claimers)
	var wg sync.WaitGroup
	for i := range claimers {
		wg.Go(func() {
			c := base
			c.UserID = f.id(fmt.Sprintf("user-%d", i))
			got, err := f.ClaimConversation(t.Context(), c)
			owners[i], errs[i] = got.UserID, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	stored, err := f.GetConversation(t.Context(), base.OrgID, base.ID)
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	for i, o := range owners {
		if o != stored.UserID {
			t.Errorf("claim %d answered owner %q, stored owner is %q", i, o, stored.UserID)
		}
	}
}
