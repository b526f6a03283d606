package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// branchCases check store.Branches and TurnWrite.Head.
func branchCases() []suiteCase {
	return []suiteCase{
		{"TreeAndHead", testBranchTree},
		{"RefusedParent", testBranchRefusedParent},
		{"SetHead", testBranchSetHead},
		{"SiblingCap", testBranchSiblingCap},
	}
}

// branchConv is a conversation of f's organisation and user.
func branchConv(f *fixture, name string) store.Conversation {
	return store.Conversation{ID: f.id(name), OrgID: f.id("org"), UserID: f.id("user"), Agent: "assistant",
		CreatedAt: at(0), UpdatedAt: at(0)}
}

// startBranch writes a turn as a turn's start does: the claim, the turn
// following parent as the head, and its user message.
func startBranch(f *fixture, t *testing.T, c store.Conversation, id, parent, text string) error {
	t.Helper()
	claim := c
	_, err := f.WriteTurn(t.Context(), c.OrgID, store.TurnWrite{
		Claim: &claim, Head: true,
		Turn: &store.Turn{ID: id, OrgID: c.OrgID, UserID: c.UserID, ConversationID: c.ID, ParentID: parent,
			Agent: "assistant", Status: store.TurnRunning, StartedAt: at(1)},
		Messages: []store.Message{{ConversationID: c.ID, TurnID: id, Role: store.RoleUser, Content: text, CreatedAt: at(1)}},
	})
	return err
}

// mustBranch is startBranch failing the test on an error.
func mustBranch(f *fixture, t *testing.T, c store.Conversation, id, parent, text string) {
	t.Helper()
	if err := startBranch(f, t, c, id, parent, text); err != nil {
		t.Fatalf("start turn %s after %q: %v", id, parent, err)
	}
}

// tree is the conversation's tree, failing the test on an error.
func (f *fixture) tree(t *testing.T, c store.Conversation) store.TurnTree {
	t.Helper()
	tr, err := f.TurnTree(t.Context(), c.OrgID, c.ID)
	if err != nil {
		t.Fatalf("TurnTree: %v", err)
	}
	return tr
}

// testBranchTree: each turn follows the parent it was written with, the
// last written is the head, the path runs from the root to it, and a
// turn stored again (its end) keeps its parent.
func testBranchTree(t *testing.T, f *fixture) {
	c := branchConv(f, "conv")
	if tr := f.tree(t, c); len(tr.Turns) != 0 || tr.Head != "" {
		t.Fatalf("tree of a conversation not stored: %+v, want empty", tr)
	}
	a, b, b2 := f.id("a"), f.id("b"), f.id("b2")
	mustBranch(f, t, c, a, "", "one")
	mustBranch(f, t, c, b, a, "two")
	mustBranch(f, t, c, b2, a, "two, again")
	got := f.tree(t, c)
	want := store.TurnTree{Head: b2, Turns: []store.TurnLink{{ID: a}, {ID: b, ParentID: a}, {ID: b2, ParentID: a}}}
	if d := diff(want, got); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	if d := diff([]string{a, b2}, got.Path()); d != "" {
		t.Errorf("path (-want +got):\n%s", d)
	}
	turn, err := f.GetTurn(t.Context(), c.OrgID, b2)
	if err != nil || turn.ParentID != a {
		t.Fatalf("GetTurn: parent %q, %v; want %q", turn.ParentID, err, a)
	}
	turn.ParentID, turn.Status = "", store.TurnDone
	if err := f.PutTurn(t.Context(), turn); err != nil {
		t.Fatalf("PutTurn: %v", err)
	}
	if again, _ := f.GetTurn(t.Context(), c.OrgID, b2); again.ParentID != a {
		t.Errorf("a turn stored again: parent %q, want the first one, %q", again.ParentID, a)
	}
	if other := f.tree(t, store.Conversation{OrgID: f.id("other-org"), ID: c.ID}); len(other.Turns) != 0 || other.Head != "" {
		t.Errorf("tree read from another organisation: %+v, want empty", other)
	}
}

// testBranchRefusedParent: a parent that is no turn of the conversation
// (another conversation's, or none) refuses the whole write.
func testBranchRefusedParent(t *testing.T, f *fixture) {
	c, other := branchConv(f, "conv"), branchConv(f, "other")
	a, x := f.id("a"), f.id("x")
	mustBranch(f, t, c, a, "", "one")
	mustBranch(f, t, other, x, "", "elsewhere")
	before := f.tree(t, c)
	for _, parent := range []string{x, f.id("none")} {
		err := startBranch(f, t, c, f.id("bad"), parent, "two")
		if !errors.Is(err, store.ErrNoSuchTurn) {
			t.Errorf("a turn after %s: err = %v, want store.ErrNoSuchTurn", parent, err)
		}
	}
	if d := diff(before, f.tree(t, c)); d != "" {
		t.Errorf("a refused write changed the tree (-before +after):\n%s", d)
	}
	if _, err := f.GetTurn(t.Context(), c.OrgID, f.id("bad")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused turn: GetTurn err = %v, want store.ErrNotFound", err)
	}
	msgs, err := f.ListMessages(t.Context(), c.OrgID, c.ID, 0)
	if err != nil || len(msgs) != 1 {
		t.Errorf("messages after refused writes: %d, %v; want the first one only", len(msgs), err)
	}
}

// testBranchSetHead: the head moves to a turn of the conversation; a
// turn of another, another user, another organisation and a held run are
// refused and change nothing.
func testBranchSetHead(t *testing.T, f *fixture) {
	c, other := branchConv(f, "conv"), branchConv(f, "other")
	a, b, b2, x := f.id("a"), f.id("b"), f.id("b2"), f.id("x")
	mustBranch(f, t, c, a, "", "one")
	mustBranch(f, t, c, b, a, "two")
	mustBranch(f, t, c, b2, a, "two, again")
	mustBranch(f, t, other, x, "", "elsewhere")
	ctx := t.Context()
	if err := f.SetHead(ctx, c.OrgID, c.UserID, c.ID, b); err != nil {
		t.Fatalf("SetHead: %v", err)
	}
	if h := f.tree(t, c).Head; h != b {
		t.Fatalf("head %q, want %q", h, b)
	}
	refusals := []struct {
		name              string
		org, user, turnID string
		want              error
	}{
		{"another conversation's turn", c.OrgID, c.UserID, x, store.ErrNoSuchTurn},
		{"no such turn", c.OrgID, c.UserID, f.id("none"), store.ErrNoSuchTurn},
		{"another user", c.OrgID, f.id("someone"), b2, store.ErrNotFound},
		{"another organisation", f.id("other-org"), c.UserID, b2, store.ErrNotFound},
	}
	for _, r := range refusals {
		if err := f.SetHead(ctx, r.org, r.user, c.ID, r.turnID); !errors.Is(err, r.want) {
			t.Errorf("%s: err = %v, want %v", r.name, err, r.want)
		}
	}
	f.claimRun(t, store.Run{OrgID: c.OrgID, ConversationID: c.ID, TurnID: f.id("running"), UserID: c.UserID,
		Replica: f.id("replica"), StartedAt: at(2), ExpiresAt: at(3)})
	if err := f.SetHead(ctx, c.OrgID, c.UserID, c.ID, b2); !errors.Is(err, store.ErrTurnRunning) {
		t.Errorf("while a run is held: err = %v, want store.ErrTurnRunning", err)
	}
	if h := f.tree(t, c).Head; h != b {
		t.Errorf("head after refusals %q, want %q", h, b)
	}
}

// testBranchSiblingCap: store.MaxSiblings turns may follow one parent
// (first messages too); one more is refused and writes nothing.
func testBranchSiblingCap(t *testing.T, f *fixture) {
	if store.MaxSiblings != 50 {
		t.Errorf("store.MaxSiblings = %d, want 50", store.MaxSiblings)
	}
	c := branchConv(f, "conv")
	root := f.id("root")
	mustBranch(f, t, c, root, "", "one")
	for _, parent := range []string{root, ""} {
		first := 0
		if parent == "" {
			first = 1 // root is one of the first messages
		}
		for i := first; i < store.MaxSiblings; i++ {
			mustBranch(f, t, c, f.id(fmt.Sprintf("%s-%d", parent, i)), parent, "again")
		}
		before := f.tree(t, c)
		err := startBranch(f, t, c, f.id(parent+"-over"), parent, "once more")
		if !errors.Is(err, store.ErrTooManyBranches) {
			t.Errorf("turn %d after %q: err = %v, want store.ErrTooManyBranches", store.MaxSiblings+1, parent, err)
		}
		if d := diff(before, f.tree(t, c)); d != "" {
			t.Errorf("a refused turn changed the tree (-before +after):\n%s", d)
		}
		if n := len(f.tree(t, c).Siblings(parent)); n != store.MaxSiblings {
			t.Errorf("%d turns after %q, want %d", n, parent, store.MaxSiblings)
		}
	}
	// A turn stored again with Head (a paused turn answered) is no new
	// sibling.
	if err := startBranch(f, t, c, f.id("-1"), "", "answer"); err != nil {
		t.Errorf("a full parent's own turn written again: %v", err)
	}
}
