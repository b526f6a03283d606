package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// unguarded is the guard of a write that needs none.
const unguarded = `WHERE true`

// ownsConversation is the guard of a write made with a claim: it holds
// when the conversation (parameters n and n+1: its ID and the claiming
// user) is the claimer's. Each statement of the batch reads it afresh
// (READ COMMITTED), after the claim, so it sees the row the claim
// inserted or found.
func ownsConversation(n int) string {
	return `WHERE EXISTS (SELECT 1 FROM conversations WHERE org_id = $1 AND id = $` +
		strconv.Itoa(n) + ` AND user_id = $` + strconv.Itoa(n+1) + `)`
}

// WriteTurn stores w's parts in one batch: one round trip, and one
// implicit transaction (a batch without BEGIN commits at its end, all or
// nothing), so a step costs one commit. With a claim, the batch cannot
// branch on the claim's answer, so each later statement is guarded by
// ownsConversation: when the conversation is another user's, they write
// nothing, and the conversation is read afterwards to be returned. A
// serialization failure or deadlock runs the batch again, as inTx does.
func (s *Store) WriteTurn(ctx context.Context, orgID string, w store.TurnWrite) (store.TurnWritten, error) {
	if err := store.CheckTurnWrite(orgID, w); err != nil {
		return store.TurnWritten{}, wrapErr("write turn", err)
	}
	var out store.TurnWritten
	err := retrying(ctx, func() error {
		if w.Head {
			if err := s.checkBranch(ctx, *w.Turn); err != nil {
				return err
			}
		}
		var err error
		out, err = s.sendTurnWrite(ctx, orgID, w)
		return err
	})
	if err == nil && w.Claim != nil && out.Conversation.ID == "" {
		// Another user's: read it as it is, in a statement of its own
		// (a new snapshot), so a claim committed meanwhile is seen.
		out.Conversation, err = s.GetConversation(ctx, orgID, w.Claim.ID)
	}
	if err != nil {
		return store.TurnWritten{}, wrapErr("write turn", err)
	}
	return out, nil
}

// sendTurnWrite sends w as one batch and reads its answers. A claim
// that finds another user's conversation answers no row: out then has
// no Conversation, and the guarded statements wrote nothing.
func (s *Store) sendTurnWrite(ctx context.Context, orgID string, w store.TurnWrite) (store.TurnWritten, error) {
	b, err := turnBatch(orgID, w)
	if err != nil {
		return store.TurnWritten{}, err
	}
	if b.Len() == 0 {
		return store.TurnWritten{}, ctx.Err()
	}
	br := s.pool.SendBatch(ctx, b)
	out, err := readTurnBatch(br, w)
	return out, errors.Join(err, br.Close())
}

// turnBatch queues w's statements: the claim, the turn, then the
// messages and the usage: one statement when there are both, which
// appends the messages only when the usage record is new (stepAppendSQL),
// so a repeated step writes neither again.
func turnBatch(orgID string, w store.TurnWrite) (*pgx.Batch, error) {
	b := &pgx.Batch{}
	guard := func(n int, args []any) (string, []any) {
		if w.Claim == nil {
			return unguarded, args
		}
		return ownsConversation(n), append(args, w.Claim.ID, w.Claim.UserID)
	}
	if c := w.Claim; c != nil {
		b.Queue(claimConversationSQL, claimArgs(cleanClaim(*c))...)
	}
	if w.Turn != nil {
		args, err := turnArgs(*w.Turn)
		if err != nil {
			return nil, err
		}
		g, args := guard(len(args)+1, args)
		b.Queue(putTurnSQL(g), args...)
		if w.Head {
			head := `UPDATE conversations SET head_turn_id = $3 WHERE org_id = $1 AND id = $2`
			hargs := []any{orgID, w.Turn.ConversationID, w.Turn.ID}
			if w.Claim != nil {
				head += ` AND user_id = $4`
				hargs = append(hargs, w.Claim.UserID)
			}
			b.Queue(head, hargs...)
		}
	}
	switch {
	case len(w.Messages) > 0 && w.Usage != nil:
		args := append(batchColumns(w.Messages).args(orgID), usageArgs(*w.Usage)...)
		g, args := guard(len(args)+1, args)
		b.Queue(stepAppendSQL(g), args...)
	case len(w.Messages) > 0:
		args := batchColumns(w.Messages).args(orgID)
		g, args := guard(len(args)+1, args)
		b.Queue(appendBatchSQL(g), args...)
	case w.Usage != nil:
		args := usageArgs(*w.Usage)
		g, args := guard(len(args)+1, args)
		b.Queue(putUsageSQL(1, g), args...)
	}
	return b, nil
}

// readTurnBatch reads turnBatch's answers, in the order it queued them.
func readTurnBatch(br pgx.BatchResults, w store.TurnWrite) (store.TurnWritten, error) {
	var out store.TurnWritten
	if w.Claim != nil {
		c, err := scanConversation(br.QueryRow(), w.Claim.OrgID)
		switch {
		case errors.Is(err, pgx.ErrNoRows): // another user's: nothing below writes
		case err != nil:
			return out, err
		default:
			out.Conversation = c
		}
	}
	owned := w.Claim == nil || out.Conversation.ID != ""
	if w.Turn != nil {
		if _, err := br.Exec(); err != nil {
			return out, err
		}
		if w.Head {
			if _, err := br.Exec(); err != nil {
				return out, err
			}
		}
	}
	switch {
	case len(w.Messages) > 0:
		rows, err := br.Query()
		if err != nil {
			return out, err
		}
		seqs, err := batchSeqs(rows, w.Messages)
		if err != nil || !owned {
			return out, err
		}
		// No row answered with usage: the step's record was there.
		out.Seqs, out.Repeated = seqs, seqs == nil && w.Usage != nil
	case w.Usage != nil:
		tag, err := br.Exec()
		if err != nil {
			return out, err
		}
		out.Repeated = owned && tag.RowsAffected() == 0
	}
	return out, nil
}

// batchSeqs reads an append's answer: the Seqs of ms, or nil when it
// appended nothing (its guard did not hold).
func batchSeqs(rows pgx.Rows, ms []store.Message) ([]int64, error) {
	byConv, n, err := readSeqs(rows)
	if err != nil || n == 0 {
		return nil, err
	}
	return assignSeqs(byConv, ms)
}
