package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/quiverhq/quiver/store"
)

// WriteTurn stores w's parts in one write transaction, so a step costs
// one commit. The claim comes first; when it finds another user's
// conversation, nothing else is written and the conversation is returned.
// The usage record goes in before the messages: when its step is stored
// already (a repeated step), the messages are not appended.
func (s *Store) WriteTurn(ctx context.Context, orgID string, w store.TurnWrite) (store.TurnWritten, error) {
	if err := store.CheckTurnWrite(orgID, w); err != nil {
		return store.TurnWritten{}, fmt.Errorf("sqlite: write turn: %w", err)
	}
	var out store.TurnWritten
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = writeTurn(ctx, tx, orgID, w)
		return err
	})
	if err != nil {
		return store.TurnWritten{}, fmt.Errorf("sqlite: write turn: %w", err)
	}
	return out, nil
}

// writeTurn writes w's parts in tx, in the order TurnWriter states.
func writeTurn(ctx context.Context, tx *sql.Tx, orgID string, w store.TurnWrite) (store.TurnWritten, error) {
	var out store.TurnWritten
	if w.Claim != nil {
		c, err := claimConversation(ctx, tx, *w.Claim)
		if err != nil {
			return out, err
		}
		if out.Conversation = c; c.UserID != w.Claim.UserID {
			return out, nil // another user's: the claim stamped nothing
		}
	}
	if w.Turn != nil {
		if w.Head {
			if err := enterBranch(ctx, tx, *w.Turn); err != nil {
				return out, err
			}
		}
		if err := putTurn(ctx, tx, *w.Turn); err != nil {
			return out, err
		}
	}
	if w.Usage != nil {
		put, err := putUsage(ctx, tx, *w.Usage)
		if err != nil {
			return out, err
		}
		if out.Repeated = !put; out.Repeated {
			return out, nil
		}
	}
	if len(w.Messages) > 0 {
		out.Seqs = make([]int64, len(w.Messages))
		for i, m := range w.Messages {
			var err error
			if out.Seqs[i], err = appendMessage(ctx, tx, orgID, m); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
