package discord

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/turn"
)

// Avatar returns a member's avatar as a PNG from the CDN: user is a
// Quiver user id ("discord_<snowflake>"), "" the caller, "self" the bot.
// The user must be a member of the organisation's server; a picture over
// MaxAvatarBytes is surface.ErrLimit.
func (d *Surface) Avatar(ctx context.Context, s turn.Scope, user string) (surface.Image, error) {
	sf, err := d.member(s, user)
	if err != nil {
		return surface.Image{}, err
	}
	p, err := d.resolve(ctx, s)
	if err != nil {
		return surface.Image{}, err
	}
	m, err := d.dg.GuildMember(p.guildID, sf, opt(ctx))
	if err != nil {
		return surface.Image{}, mapErr("read the member", err, errNoMember)
	}
	if m.User == nil {
		return surface.Image{}, errNoMember
	}
	url := discordgo.EndpointDefaultUserAvatar(m.User.DefaultAvatarIndex())
	if m.User.Avatar != "" {
		url = discordgo.EndpointUserAvatar(m.User.ID, m.User.Avatar) // static PNG, animated ones too
	}
	data, err := d.fetchPNG(ctx, url)
	if err != nil {
		return surface.Image{}, err
	}
	return surface.Image{MIME: "image/png", Data: data}, nil
}

// errNoMember is the answer for a user who is not a member of the
// server: surface has no error of its own for people.
var errNoMember = fmt.Errorf("%w: no such member of this server", errNotAllowed)

// member returns the snowflake user names for the scope.
func (d *Surface) member(s turn.Scope, user string) (string, error) {
	switch user {
	case "self":
		return d.bot, nil
	case "":
		user = s.UserID
	}
	sf, ok := Snowflake(user)
	if !ok {
		return "", errNoMember
	}
	return sf, nil
}

// fetchPNG reads at most MaxAvatarBytes from the CDN.
func (d *Surface) fetchPNG(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("discord: avatar request: %w", err)
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discord: fetch the avatar: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("discord: fetch the avatar: CDN answered %s", resp.Status)
	}
	if resp.ContentLength > MaxAvatarBytes {
		return nil, fmt.Errorf("%w: the avatar is %d bytes; the limit is %d", surface.ErrLimit, resp.ContentLength, MaxAvatarBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAvatarBytes+1))
	if err != nil {
		return nil, fmt.Errorf("discord: read the avatar: %w", err)
	}
	if len(data) > MaxAvatarBytes {
		return nil, fmt.Errorf("%w: the avatar is over %d bytes", surface.ErrLimit, MaxAvatarBytes)
	}
	if http.DetectContentType(data) != "image/png" {
		return nil, fmt.Errorf("discord: the avatar is not a PNG")
	}
	return data, nil
}

// BlockList holds whom each agent of each organisation ignores, by
// Quiver user id. Implementations are safe for concurrent use.
// StoreBlocks keeps it in the store (what quiver serve uses);
// MemoryBlocks is for tests and single-process tools.
type BlockList interface {
	// Block records user as blocked for the agent; blocking again
	// replaces the reason.
	Block(ctx context.Context, orgID, agent, userID, reason string) error
	// Unblock removes the record; one not blocked is no error.
	Unblock(ctx context.Context, orgID, agent, userID string) error
	// Blocked reports whether user is blocked for the agent.
	Blocked(ctx context.Context, orgID, agent, userID string) (bool, error)
}

// MemoryBlocks is an in-memory BlockList, lost on restart. The zero
// value is not usable: NewMemoryBlocks makes one.
type MemoryBlocks struct {
	mu sync.Mutex
	m  map[[3]string]string // org, agent, user → reason
}

// NewMemoryBlocks returns an empty MemoryBlocks.
func NewMemoryBlocks() *MemoryBlocks { return &MemoryBlocks{m: map[[3]string]string{}} }

// Block records the block.
func (b *MemoryBlocks) Block(_ context.Context, orgID, agent, userID, reason string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[[3]string{orgID, agent, userID}] = reason
	return nil
}

// Unblock removes it.
func (b *MemoryBlocks) Unblock(_ context.Context, orgID, agent, userID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, [3]string{orgID, agent, userID})
	return nil
}

// Blocked reports it.
func (b *MemoryBlocks) Blocked(_ context.Context, orgID, agent, userID string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.m[[3]string{orgID, agent, userID}]
	return ok, nil
}

// Block makes the scope's agent ignore a member (a Quiver user id
// "discord_<snowflake>"): neither the caller nor the bot. The reason is
// cut to MaxReasonRunes.
func (d *Surface) Block(ctx context.Context, s turn.Scope, user, reason string) error {
	sf, err := d.blockable(ctx, s, user)
	if err != nil {
		return err
	}
	if err := d.blocks.Block(ctx, s.OrgID, s.Agent, UserID(sf), cut(reason, MaxReasonRunes)); err != nil {
		return fmt.Errorf("discord: block: %w", err)
	}
	return nil
}

// Unblock lifts a block; one not blocked is no error.
func (d *Surface) Unblock(ctx context.Context, s turn.Scope, user string) error {
	sf, err := d.blockable(ctx, s, user)
	if err != nil {
		return err
	}
	if err := d.blocks.Unblock(ctx, s.OrgID, s.Agent, UserID(sf)); err != nil {
		return fmt.Errorf("discord: unblock: %w", err)
	}
	return nil
}

// Blocked reports whether the scope's agent ignores the Quiver user:
// what gateway ingestion will ask before answering.
func (d *Surface) Blocked(ctx context.Context, s turn.Scope, user string) (bool, error) {
	ok, err := d.blocks.Blocked(ctx, s.OrgID, s.Agent, user)
	if err != nil {
		return false, fmt.Errorf("discord: read the block list: %w", err)
	}
	return ok, nil
}

// blockable checks the organisation has a server, the person asking
// may moderate members in the channel (MODERATE_MEMBERS: a member cannot
// have the agent ignore a moderator, nor fill its block list), and user
// is a member of the server who is neither the caller nor the bot.
func (d *Surface) blockable(ctx context.Context, s turn.Scope, user string) (string, error) {
	if _, ok := d.guilds(s.OrgID); !ok {
		return "", errNoPlace
	}
	sf, ok := Snowflake(user)
	switch {
	case !ok:
		return "", errNoMember
	case sf == d.bot || user == s.UserID:
		return "", fmt.Errorf("%w: neither the agent nor the person talking can be blocked", errNotAllowed)
	}
	p, err := d.resolve(ctx, s)
	if err != nil {
		return "", err
	}
	if err := p.callerRequire(discordgo.PermissionModerateMembers); err != nil {
		return "", err
	}
	if _, err := d.dg.GuildMember(p.guildID, sf, opt(ctx)); err != nil {
		return "", mapErr("read the member", err, errNoMember)
	}
	return sf, nil
}

// cut returns s cut to at most n runes.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// StoreBlocks is the BlockList kept in the store (store.Blocks): persona
// scoped, across restarts and replicas. Now stamps each block; nil is
// time.Now.
type StoreBlocks struct {
	Blocks store.Blocks
	Now    func() time.Time
}

// Block implements BlockList: the agent's turn blocked the person.
func (b StoreBlocks) Block(ctx context.Context, orgID, agent, userID, reason string) error {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return b.Blocks.BlockUser(ctx, store.Block{OrgID: orgID, Agent: agent, UserID: userID, Reason: reason, By: "agent", CreatedAt: now()})
}

// Unblock implements BlockList.
func (b StoreBlocks) Unblock(ctx context.Context, orgID, agent, userID string) error {
	return b.Blocks.UnblockUser(ctx, orgID, agent, userID)
}

// Blocked implements BlockList.
func (b StoreBlocks) Blocked(ctx context.Context, orgID, agent, userID string) (bool, error) {
	return b.Blocks.UserBlocked(ctx, orgID, agent, userID)
}
