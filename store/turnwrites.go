package store

import (
	"context"
	"fmt"
)

// TurnWrite is what one step of a turn records: at its start the
// conversation it enters, the turn and the user's message; after a model
// step the reply's messages, the call's usage and the turn's step count;
// at its end the last messages and the final status. A store writes it in
// one transaction, so a step costs one commit instead of one per record.
// Every part is optional; an empty TurnWrite writes nothing.
//
// A write with Usage is its model step's, and the usage record's (turn,
// step) is the step's key, stored once (see Usages.PutUsage). A write can
// fail ambiguously: committed, but its answer lost (the context cancelled
// during the commit's round trip); the caller then sends the step again.
// When the store already holds the step's usage record, the write is such
// a retry: it stores its Claim and Turn (the turn's latest state) but
// neither its Messages nor its Usage again, and says so
// (TurnWritten.Repeated), so that a step's messages and usage are
// recorded once however often it is sent.
type TurnWrite struct {
	// Claim, when non-nil, enters the conversation first, as
	// Conversations.ClaimConversation does. When it belongs to another
	// user, nothing of the write is stored (the claim stamps nothing
	// either) and WriteTurn returns that conversation unchanged, with no
	// error: the caller learns by its UserID that it is not theirs.
	Claim *Conversation
	// Turn, when non-nil, is put as Turns.PutTurn puts it.
	Turn *Turn
	// Messages are appended in order, as Messages.AppendMessages does.
	Messages []Message
	// Usage, when non-nil, is put as Usages.PutUsage puts it.
	Usage *Usage
	// Head, with Turn, makes Turn its conversation's head (Branches), as
	// a turn starting does: its ParentID must then be "" or a turn of the
	// same conversation (else ErrNoSuchTurn), and fewer than MaxSiblings
	// other turns may follow that parent (else ErrTooManyBranches);
	// either way nothing of the write is stored.
	Head bool
}

// TurnWritten is what WriteTurn stored.
type TurnWritten struct {
	// Conversation is the claimed conversation as stored afterwards (see
	// TurnWrite.Claim); zero without a Claim.
	Conversation Conversation
	// Seqs are the Seqs of TurnWrite.Messages, in order; nil when the
	// messages were not written (no messages, another user's
	// conversation, or a repeated step).
	Seqs []int64
	// Repeated reports that the store already held the write's model step
	// (its usage record's turn and step): its Messages and Usage were not
	// written again.
	Repeated bool
}

// Written reports whether the write was stored: it had no Claim, or the
// claimed conversation is userID's.
func (w TurnWritten) Written(userID string) bool {
	return w.Conversation.ID == "" || w.Conversation.UserID == userID
}

// TurnWriter writes a turn's step in one transaction.
type TurnWriter interface {
	// WriteTurn stores every part of w in orgID, in one transaction: all
	// of them or none. The claim comes first, then the turn, the messages
	// and the usage; each part keeps the contract of the method it
	// stands for. A part whose OrgID is not orgID is refused with an
	// error, and nothing is written.
	WriteTurn(ctx context.Context, orgID string, w TurnWrite) (TurnWritten, error)
}

// CheckTurnWrite returns an error when a part of w names an organisation
// other than orgID, or, with a Claim, a conversation other than the
// claimed one (or a turn of another user): a store checks it before
// writing anything, so that the claim's guard covers every part.
func CheckTurnWrite(orgID string, w TurnWrite) error {
	if err := checkClaimed(w); err != nil {
		return err
	}
	switch {
	case orgID == "":
		return fmt.Errorf("turn write: no organisation")
	case w.Claim != nil && w.Claim.OrgID != orgID:
		return fmt.Errorf("turn write: conversation %s is of organisation %q, not %q", w.Claim.ID, w.Claim.OrgID, orgID)
	case w.Turn != nil && w.Turn.OrgID != orgID:
		return fmt.Errorf("turn write: turn %s is of organisation %q, not %q", w.Turn.ID, w.Turn.OrgID, orgID)
	case w.Head && w.Turn == nil:
		return fmt.Errorf("turn write: a head without its turn")
	case w.Head && w.Turn.ParentID == w.Turn.ID:
		return fmt.Errorf("turn write: turn %s follows itself: %w", w.Turn.ID, ErrNoSuchTurn)
	case w.Usage != nil && w.Usage.OrgID != orgID:
		return fmt.Errorf("turn write: usage of turn %s is of organisation %q, not %q", w.Usage.TurnID, w.Usage.OrgID, orgID)
	}
	return nil
}

// checkClaimed refuses a part of a write with a Claim that is not of the
// claimed conversation and user.
func checkClaimed(w TurnWrite) error {
	c := w.Claim
	if c == nil {
		return nil
	}
	if t := w.Turn; t != nil && (t.ConversationID != c.ID || t.UserID != c.UserID) {
		return fmt.Errorf("turn write: turn %s is not of the claimed conversation %s and its user", t.ID, c.ID)
	}
	for _, m := range w.Messages {
		if m.ConversationID != c.ID {
			return fmt.Errorf("turn write: a message of conversation %s in a write claiming %s", m.ConversationID, c.ID)
		}
	}
	if u := w.Usage; u != nil && u.ConversationID != c.ID {
		return fmt.Errorf("turn write: usage of conversation %s in a write claiming %s", u.ConversationID, c.ID)
	}
	return nil
}
