package store

import (
	"context"
	"errors"
	"fmt"
)

// PausedTurn is the rule for "is this conversation paused?", shared by
// every reader: the turn of the last message that has one, when that turn
// is paused; nil otherwise (no turn yet, the turn gone, or not paused).
// msgs are the conversation's messages in order.
func PausedTurn(ctx context.Context, turns Turns, orgID string, msgs []Message) (*Turn, error) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].TurnID == "" {
			continue
		}
		t, err := turns.GetTurn(ctx, orgID, msgs[i].TurnID)
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the last turn: %w", err)
		}
		if t.Status != TurnPaused {
			return nil, nil
		}
		return &t, nil
	}
	return nil, nil
}
