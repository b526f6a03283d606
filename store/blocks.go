package store

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Bounds of the blocks repository.
const (
	// MaxBlocksPerAgent is how many people one agent (persona) of an
	// organisation may have blocked.
	MaxBlocksPerAgent = 1000
	// MaxBlockReasonRunes bounds a block's reason.
	MaxBlockReasonRunes = 300
)

// Errors of the blocks repository, returned wrapped; test with errors.Is.
var (
	// ErrBlockInvalid reports a block that breaks a rule; nothing is
	// written.
	ErrBlockInvalid = errors.New("invalid block")
	// ErrBlockQuota reports an agent holding MaxBlocksPerAgent blocks;
	// nothing is written.
	ErrBlockQuota = errors.New("block limit reached")
)

// Block is a person an agent (a persona) no longer answers: persona
// scoped, so other agents still do, and nothing of the person's (their
// memories) is touched.
type Block struct {
	OrgID  string
	Agent  string
	UserID string
	// Reason is why, as the agent or an admin gave it (plain text).
	Reason string
	// By is who blocked: the agent's turn ("agent") or an admin's id.
	By        string
	CreatedAt time.Time
}

// Blocks is the persona-scoped block list.
type Blocks interface {
	// BlockUser stores b, replacing the reason of a block already there;
	// an agent holding MaxBlocksPerAgent others gives ErrBlockQuota.
	BlockUser(ctx context.Context, b Block) error
	// UnblockUser deletes the block; none there is no error.
	UnblockUser(ctx context.Context, orgID, agent, userID string) error
	// UserBlocked reports whether the agent has the person blocked.
	UserBlocked(ctx context.Context, orgID, agent, userID string) (bool, error)
	// ListBlocks lists the agent's blocks, newest first.
	ListBlocks(ctx context.Context, orgID, agent string) ([]Block, error)
}

// CheckBlock returns b cleaned (the reason as plain text, the time in
// UTC) or an ErrBlockInvalid naming the first rule it breaks.
func CheckBlock(b Block) (Block, error) {
	for _, k := range []struct{ name, v string }{{"organisation", b.OrgID}, {"agent", b.Agent}, {"user", b.UserID}} {
		if k.v == "" || len(k.v) > MaxBlobKeyBytes || !ValidBlobKey(k.v) {
			return Block{}, fmt.Errorf("%w: a block needs its %s", ErrBlockInvalid, k.name)
		}
	}
	if len(b.By) > MaxBlobKeyBytes || !ValidBlobKey(b.By) {
		return Block{}, fmt.Errorf("%w: who blocked is not valid", ErrBlockInvalid)
	}
	b.Reason = PlainText(b.Reason)
	if n := utf8.RuneCountInString(b.Reason); n > MaxBlockReasonRunes {
		return Block{}, fmt.Errorf("%w: the reason is %d characters; the limit is %d", ErrBlockInvalid, n, MaxBlockReasonRunes)
	}
	b.CreatedAt = b.CreatedAt.UTC()
	return b, nil
}
