package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// turnWriteCases checks TurnWriter: a step's records in one transaction.
func turnWriteCases() []suiteCase {
	return []suiteCase{
		{"StartAndSteps", testTurnWriteStartAndSteps},
		{"OtherUsersConversation", testTurnWriteOtherUsersConversation},
		{"AllOrNothing", testTurnWriteAllOrNothing},
		{"RepeatedStep", testTurnWriteRepeatedStep},
		{"RepeatedUsageOnly", testTurnWriteRepeatedUsageOnly},
		{"OtherOrgRefused", testTurnWriteOtherOrgRefused},
		{"ConcurrentClaims", testTurnWriteConcurrentClaims},
	}
}

// turnStart is a turn's first write: the claim of a new conversation,
// the turn running, and its context and user messages.
func (f *fixture) turnStart(user string) store.TurnWrite {
	c := f.newConversation("org", "conv", user)
	c.Title = ""
	tu := f.newTurn("org", "turn")
	tu.UserID, tu.ConversationID, tu.Steps = c.UserID, c.ID, 0
	msgs := f.transcript("conv")[:2]
	return store.TurnWrite{Claim: &c, Turn: &tu, Messages: msgs}
}

// writeTurn returns WriteTurn's answer, failing the test on error.
func (f *fixture) writeTurn(t *testing.T, w store.TurnWrite) store.TurnWritten {
	t.Helper()
	got, err := f.WriteTurn(t.Context(), f.id("org"), w)
	if err != nil {
		t.Fatalf("WriteTurn: %v", err)
	}
	return got
}

// wantTurnWritten fails unless the store holds exactly what the writes
// ws stored: the turn as the last one put it, the messages of every
// write in order, the usage records of every write.
func (f *fixture) wantTurnWritten(t *testing.T, what string, ws ...store.TurnWrite) {
	t.Helper()
	org := f.id("org")
	var msgs []store.Message
	var usage []store.Usage
	var last *store.Turn
	for _, w := range ws {
		msgs = append(msgs, w.Messages...)
		if w.Usage != nil {
			usage = append(usage, *w.Usage)
		}
		if w.Turn != nil {
			last = w.Turn
		}
	}
	got := f.list(t, org, f.id("conv"), 0)
	for i := range got {
		got[i].Seq = 0
	}
	if d := diff(msgs, got); d != "" {
		t.Errorf("%s: messages (-want +got):\n%s", what, d)
	}
	gotUsage, err := f.ListUsage(t.Context(), org, f.id("turn"))
	if err != nil {
		t.Fatalf("%s: ListUsage: %v", what, err)
	}
	if d := diff(usage, gotUsage); d != "" {
		t.Errorf("%s: usage (-want +got):\n%s", what, d)
	}
	gotTurn, err := f.GetTurn(t.Context(), org, f.id("turn"))
	switch {
	case last == nil:
		wantNotFound(t, what+": GetTurn", err)
	case err != nil:
		t.Errorf("%s: GetTurn: %v", what, err)
	default:
		if d := diff(*last, gotTurn); d != "" {
			t.Errorf("%s: turn (-want +got):\n%s", what, d)
		}
	}
}

// testTurnWriteStartAndSteps: a turn's start claims the conversation and
// stores the turn and its messages; a model step's write adds the reply,
// its usage and the step count; the final write the answer and the end.
// Seqs continue across writes and appends.
func testTurnWriteStartAndSteps(t *testing.T, f *fixture) {
	start := f.turnStart("user")
	got := f.writeTurn(t, start)
	if got.Conversation.UserID != start.Claim.UserID || !got.Written(start.Claim.UserID) {
		t.Errorf("claim answered owner %q, want %q", got.Conversation.UserID, start.Claim.UserID)
	}
	if d := diff([]int64{1, 2}, got.Seqs); d != "" {
		t.Errorf("start's Seqs (-want +got):\n%s", d)
	}
	reply := f.transcript("conv")[2:4]
	tu := *start.Turn
	tu.Steps = 1
	u := f.newUsage("org", 1, 1, at(3))
	step := store.TurnWrite{Turn: &tu, Messages: reply, Usage: &u}
	if d := diff([]int64{3, 4}, f.writeTurn(t, step).Seqs); d != "" {
		t.Errorf("step's Seqs (-want +got):\n%s", d)
	}
	results := f.transcript("conv")[5:6]
	if _, err := f.AppendMessages(t.Context(), f.id("org"), results); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	end := tu
	end.Steps, end.Status, end.EndedAt = 2, store.TurnDone, at(40)
	u2 := f.newUsage("org", 2, 2, at(7))
	last := store.TurnWrite{Turn: &end, Messages: f.transcript("conv")[7:], Usage: &u2}
	if d := diff([]int64{6}, f.writeTurn(t, last).Seqs); d != "" {
		t.Errorf("end's Seqs (-want +got):\n%s", d)
	}
	f.wantTurnWritten(t, "after the turn", start, step, store.TurnWrite{Messages: results}, last)
	conv, err := f.GetConversation(t.Context(), start.Claim.OrgID, start.Claim.ID)
	if err != nil || conv.UserID != start.Claim.UserID {
		t.Errorf("GetConversation = %+v, %v; want the claimed conversation", conv, err)
	}
}

// testTurnWriteOtherUsersConversation: a start whose conversation is
// another user's writes nothing (the conversation, its UpdatedAt
// included, stays as it was) and answers with that conversation.
func testTurnWriteOtherUsersConversation(t *testing.T, f *fixture) {
	theirs := f.newConversation("org", "conv", "owner")
	f.putConversation(t, theirs)
	w := f.turnStart("intruder")
	w.Claim.UpdatedAt = at(50)
	u := f.newUsage("org", 1, 1, at(3))
	w.Usage = &u
	got := f.writeTurn(t, w)
	if d := diff(theirs, got.Conversation); d != "" {
		t.Errorf("answered conversation (-want +got):\n%s", d)
	}
	if got.Written(w.Claim.UserID) || got.Seqs != nil {
		t.Errorf("Written = %t, Seqs %v; want false and nil", got.Written(w.Claim.UserID), got.Seqs)
	}
	f.wantTurnWritten(t, "after another user's start")
	stored, err := f.GetConversation(t.Context(), theirs.OrgID, theirs.ID)
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	if d := diff(theirs, stored); d != "" {
		t.Errorf("stored conversation (-want +got):\n%s", d)
	}
}

// testTurnWriteAllOrNothing: a write whose last part the store refuses
// keeps none of its parts, the claim included: a negative step, which
// every backend's schema refuses (its CHECK), and a NUL in a text field,
// which PostgreSQL refuses (a store that takes it keeps every part).
func testTurnWriteAllOrNothing(t *testing.T, f *fixture) {
	for _, tc := range []struct {
		name    string
		edit    func(*store.Usage)
		refused bool // by every backend
	}{
		{"NegativeStep", func(u *store.Usage) { u.Step = -1 }, true},
		{"NUL", func(u *store.Usage) { u.Model = "bad\x00model" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := f.sub(tc.name)
			w := f.turnStart("user")
			u := f.newUsage("org", 1, 1, at(3))
			tc.edit(&u)
			w.Usage = &u
			_, err := f.WriteTurn(t.Context(), f.id("org"), w)
			if err == nil {
				if tc.refused {
					t.Fatal("WriteTurn took the write, want it refused")
				}
				f.wantTurnWritten(t, "a write taken whole", w)
				return
			}
			f.wantTurnWritten(t, "a refused write")
			_, err = f.GetConversation(t.Context(), w.Claim.OrgID, w.Claim.ID)
			wantNotFound(t, "the refused write's conversation", err)
		})
	}
}

// stepWrite is a turn's first model step after start: the reply (text
// and a call), its usage as step 1, and the step count.
func (f *fixture) stepWrite(start store.TurnWrite) store.TurnWrite {
	tu := *start.Turn
	tu.Steps = 1
	u := f.newUsage("org", 1, 1, at(3))
	return store.TurnWrite{Turn: &tu, Messages: f.transcript("conv")[2:4], Usage: &u}
}

// testTurnWriteRepeatedStep: a step's write sent again after it
// committed (its answer lost), as a turn ending sends its last step with
// its final status, stores the turn's new state and says it repeated the
// step, with neither its messages nor its usage stored twice. Messages
// appended after it keep their Seqs in order.
func testTurnWriteRepeatedStep(t *testing.T, f *fixture) {
	start := f.turnStart("user")
	f.writeTurn(t, start)
	step := f.stepWrite(start)
	if got := f.writeTurn(t, step); got.Repeated || len(got.Seqs) != 2 {
		t.Fatalf("the step's first write: Repeated %t, Seqs %v; want false and two", got.Repeated, got.Seqs)
	}
	retry := step
	end := *step.Turn
	end.Status, end.EndedAt = store.TurnInterrupted, at(40)
	retry.Turn = &end
	again := *step.Usage
	again.OutputTokens++ // a repeat is known by its turn and step alone
	retry.Usage = &again
	got := f.writeTurn(t, retry)
	if !got.Repeated || got.Seqs != nil {
		t.Errorf("the repeated step: Repeated %t, Seqs %v; want true and nil", got.Repeated, got.Seqs)
	}
	f.wantTurnWritten(t, "after the repeated step", start, store.TurnWrite{Turn: &end, Messages: step.Messages, Usage: step.Usage})
	seqs, err := f.AppendMessages(t.Context(), f.id("org"), f.transcript("conv")[5:6])
	if err != nil || len(seqs) != 1 || seqs[0] != 5 {
		t.Errorf("AppendMessages after the repeated step: %v, %v; want Seq 5", seqs, err)
	}
}

// testTurnWriteRepeatedUsageOnly: a step's write with usage and no
// messages, sent again, stores the turn and not the usage again.
func testTurnWriteRepeatedUsageOnly(t *testing.T, f *fixture) {
	start := f.turnStart("user")
	f.writeTurn(t, start)
	step := f.stepWrite(start)
	step.Messages = nil
	if got := f.writeTurn(t, step); got.Repeated {
		t.Fatal("the step's first write says Repeated")
	}
	end := *step.Turn
	end.Status = store.TurnDone
	retry := store.TurnWrite{Turn: &end, Usage: step.Usage}
	if got := f.writeTurn(t, retry); !got.Repeated {
		t.Error("the repeated step's write does not say Repeated")
	}
	f.wantTurnWritten(t, "after the repeated step", start, retry)
}

// testTurnWriteOtherOrgRefused: a part naming another organisation, or
// with a claim another conversation or user, is refused before anything
// is written.
func testTurnWriteOtherOrgRefused(t *testing.T, f *fixture) {
	for _, tc := range []struct {
		name string
		edit func(*store.TurnWrite)
	}{
		{"Claim", func(w *store.TurnWrite) { w.Claim.OrgID = f.id("other") }},
		{"Turn", func(w *store.TurnWrite) { w.Turn.OrgID = f.id("other") }},
		{"Usage", func(w *store.TurnWrite) { u := f.newUsage("other", 1, 1, at(3)); w.Usage = &u }},
		// With a claim, every part must be of the claimed conversation
		// (and the turn of its user): the claim's guard covers them all.
		{"TurnOfOtherConversation", func(w *store.TurnWrite) { w.Turn.ConversationID = f.id("other-conv") }},
		{"TurnOfOtherUser", func(w *store.TurnWrite) { w.Turn.UserID = f.id("other-user") }},
		{"MessageOfOtherConversation", func(w *store.TurnWrite) { w.Messages[1].ConversationID = f.id("other-conv") }},
		{"UsageOfOtherConversation", func(w *store.TurnWrite) {
			u := f.newUsage("org", 1, 1, at(3))
			u.ConversationID = f.id("other-conv")
			w.Usage = &u
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := f.turnStart("user")
			tc.edit(&w)
			if _, err := f.WriteTurn(t.Context(), f.id("org"), w); err == nil {
				t.Fatal("WriteTurn succeeded, want an error")
			}
			f.wantTurnWritten(t, "after the refused write")
		})
	}
}

// testTurnWriteConcurrentClaims: eight users start a turn in one new
// conversation at once, each with a turn of its own; exactly one owns
// the conversation, every write answers with that owner, and only the
// owner's turn and messages are stored.
func testTurnWriteConcurrentClaims(t *testing.T, f *fixture) {
	const writers = 8
	ws := make([]store.TurnWrite, writers)
	got := make([]store.TurnWritten, writers)
	errs := make([]error, writers)
	for i := range ws {
		ws[i] = f.turnStart(fmt.Sprintf("user-%d", i))
		ws[i].Turn.ID = f.id(fmt.Sprintf("turn-%d", i))
		for j := range ws[i].Messages {
			ws[i].Messages[j].TurnID = ws[i].Turn.ID
		}
	}
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() { got[i], errs[i] = f.WriteTurn(t.Context(), f.id("org"), ws[i]) })
	}
	wg.Wait()
	stored, err := f.GetConversation(t.Context(), f.id("org"), f.id("conv"))
	if err != nil {
		t.Fatalf("GetConversation: %v", err)
	}
	var winners []int
	for i := range ws {
		if errs[i] != nil {
			t.Fatalf("write %d: %v", i, errs[i])
		}
		if got[i].Conversation.UserID != stored.UserID {
			t.Errorf("write %d answered owner %q, stored owner is %q", i, got[i].Conversation.UserID, stored.UserID)
		}
		_, err := f.GetTurn(t.Context(), f.id("org"), ws[i].Turn.ID)
		if got[i].Written(ws[i].Claim.UserID) {
			winners = append(winners, i)
			if err != nil {
				t.Errorf("the owner's turn: GetTurn: %v", err)
			}
			continue
		}
		wantNotFound(t, fmt.Sprintf("write %d's turn", i), err)
	}
	if len(winners) != 1 {
		t.Fatalf("writes %v were stored, want exactly one", winners)
	}
	msgs := f.list(t, f.id("org"), f.id("conv"), 0)
	if len(msgs) != 2 || msgs[0].TurnID != ws[winners[0]].Turn.ID || msgs[1].TurnID != ws[winners[0]].Turn.ID {
		t.Errorf("stored messages %+v, want the owner's two", msgs)
	}
}
