// Package discord is a Discord server's channels and threads as a
// surface, over discordgo's REST API. It implements every capability
// surface.Lookup declares for Discord: message metadata, reactions,
// replies, pins, edits and deletions, threads, posts into the server's
// other channels, the server's stickers, avatars and blocking.
//
// Contracts:
//   - The organisation's server is Config.Guilds(orgID); the scope's
//     ChannelID is the channel or thread the turn happens in. A channel
//     of another server, one the bot cannot see, or none at all is
//     surface.ErrNoPlace (for the scope's own channel an error that is
//     surface.ErrNoMessage too: there is no message to act on, as the
//     tools say for a web chat conversation out of reach); a message id
//     that is not a snowflake or not in the scope's channel is
//     surface.ErrNoMessage, whatever the reason.
//   - Before every action the bot's permissions in the channel are
//     computed (the guild's roles, the bot member's roles, the channel's
//     overwrites; a thread takes its parent's) and a missing one is an
//     error wrapping surface.ErrNotAllowed that names it (MANAGE_MESSAGES,
//     ADD_REACTIONS, SEND_MESSAGES, ...). Discord's own refusals map the
//     same way: 403 to ErrNotAllowed, 404 to ErrNoMessage or ErrNoPlace,
//     the pin and reaction maximums to surface.ErrLimit.
//   - Bounds are checked before any request: message text at most
//     MaxTextRunes, Recent at most MaxRecent messages, a block reason cut
//     to MaxReasonRunes, an avatar at most MaxAvatarBytes.
//   - Every message the surface posts carries a nonce with enforce_nonce,
//     derived from an idempotency key (WithIdempotencyKey, else the
//     scope's TurnID and a per-turn counter), so a retried send posts once
//     within Discord's nonce window (a few minutes).
//   - Discord users are Quiver users "discord_<snowflake>" (UserID,
//     Snowflake); Author.ID in listings and the user arguments of Avatar
//     and Block are such ids.
//
// What comes later: gateway ingestion (turns from MESSAGE_CREATE), the
// connection lease, slash commands, and a persisted block list (Config
// takes a BlockList; MemoryBlocks is the in-memory one).
package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/quiverhq/quiver/surface"
)

// Bounds the surface holds to, refused or cut before any request.
const (
	// MaxTextRunes is Discord's message length.
	MaxTextRunes = 2000
	// MaxThreadNameRunes is Discord's thread name length.
	MaxThreadNameRunes = 100
	// MaxRecent is the most messages Recent lists (Discord's page).
	MaxRecent = 100
	// MaxReasonRunes bounds a block reason; a longer one is cut.
	MaxReasonRunes = 300
	// MaxAvatarBytes bounds an avatar read from the CDN.
	MaxAvatarBytes = 1 << 20
	// MaxEmojiBytes bounds a reaction's emoji ("name:id" included).
	MaxEmojiBytes = 100
)

// Config builds a Surface.
type Config struct {
	// Session is the bot's discordgo session; required. Only its REST
	// side is used: the gateway may be open or not.
	Session *discordgo.Session
	// BotUserID is the bot's user snowflake; required.
	BotUserID string
	// Guilds maps an organisation to its Discord server; required. ok
	// false means the organisation has none: every call is ErrNoPlace.
	Guilds func(orgID string) (guildID string, ok bool)
	// Blocks holds who is blocked; nil means an empty MemoryBlocks.
	Blocks BlockList
	// HTTP fetches avatars from the CDN; nil means Session.Client.
	HTTP *http.Client
}

// Surface is Discord as a surface. It is safe for concurrent use.
type Surface struct {
	dg     *discordgo.Session
	bot    string
	guilds func(string) (string, bool)
	blocks BlockList
	http   *http.Client

	mu    sync.Mutex
	turns map[string]uint64 // posts per turn, for the nonce counter
}

// The interfaces Surface implements, checked at compile time.
var (
	_ surface.Surface      = (*Surface)(nil)
	_ surface.Reactor      = (*Surface)(nil)
	_ surface.Replier      = (*Surface)(nil)
	_ surface.Pinner       = (*Surface)(nil)
	_ surface.Editor       = (*Surface)(nil)
	_ surface.Threader     = (*Surface)(nil)
	_ surface.Poster       = (*Surface)(nil)
	_ surface.Stickerer    = (*Surface)(nil)
	_ surface.AvatarReader = (*Surface)(nil)
	_ surface.Blocker      = (*Surface)(nil)
)

// New returns the Discord surface over cfg. It panics without a
// session, a bot user id or a guild mapping: wiring mistakes to catch at
// start-up.
func New(cfg Config) *Surface {
	switch {
	case cfg.Session == nil:
		panic("discord: a session is required")
	case !isSnowflake(cfg.BotUserID):
		panic("discord: the bot's user id must be a snowflake")
	case cfg.Guilds == nil:
		panic("discord: a guild mapping is required")
	}
	d := &Surface{dg: cfg.Session, bot: cfg.BotUserID, guilds: cfg.Guilds, blocks: cfg.Blocks, http: cfg.HTTP,
		turns: map[string]uint64{}}
	if d.blocks == nil {
		d.blocks = NewMemoryBlocks()
	}
	if d.http == nil {
		d.http = cfg.Session.Client
	}
	return d
}

// Name returns surface.Discord.
func (d *Surface) Name() string { return surface.Discord }

// Capabilities returns Discord's, as surface.Lookup gives them.
func (d *Surface) Capabilities() surface.Capabilities {
	sp, _ := surface.Lookup(surface.Discord)
	return sp.Caps
}

// userPrefix starts the Quiver id of a Discord user.
const userPrefix = "discord_"

// UserID is the Quiver user id of the Discord user with snowflake sf.
func UserID(sf string) string { return userPrefix + sf }

// Snowflake returns the Discord snowflake a Quiver user id names; ok
// false for any id UserID does not make from a snowflake.
func Snowflake(userID string) (string, bool) {
	sf, found := strings.CutPrefix(userID, userPrefix)
	if !found || !isSnowflake(sf) {
		return "", false
	}
	return sf, true
}

// isSnowflake reports whether s is a snowflake as Discord writes it: an
// unsigned 64-bit decimal without sign, spaces or leading zeros.
func isSnowflake(s string) bool {
	if s == "" || len(s) > 20 || s[0] == '0' {
		return false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && strconv.FormatUint(n, 10) == s
}

// opt passes ctx to a discordgo request.
func opt(ctx context.Context) discordgo.RequestOption { return discordgo.WithContext(ctx) }

// mapErr turns Discord's answers into the surface's: notFound is what a
// 404 (or a channel the bot cannot see) means for the call.
func mapErr(op string, err error, notFound error) error {
	if err == nil {
		return nil
	}
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return fmt.Errorf("discord: %s: %w", op, err)
	}
	code := 0
	if re.Message != nil {
		code = re.Message.Code
	}
	switch {
	case code == discordgo.ErrCodeUnknownMessage:
		return surface.ErrNoMessage
	case code == discordgo.ErrCodeUnknownChannel || code == discordgo.ErrCodeMissingAccess:
		return surface.ErrNoPlace
	case re.Response.StatusCode == http.StatusNotFound:
		return notFound
	case code == discordgo.ErrCodeMaximumPinsReached:
		return fmt.Errorf("%w: the channel holds Discord's maximum of 50 pins", surface.ErrLimit)
	case code == discordgo.ErrCodeTooManyReactions:
		return fmt.Errorf("%w: the message holds Discord's maximum of 20 reactions", surface.ErrLimit)
	case code == discordgo.ErrCodeUnknownEmoji:
		return fmt.Errorf("%w: Discord does not know that emoji", surface.ErrNotAllowed)
	case code == discordgo.ErrCodeCannotEditFromAnotherUser:
		return fmt.Errorf("%w: only the bot's own messages can be edited", surface.ErrNotAllowed)
	case re.Response.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: Discord refused to %s (missing permissions)", surface.ErrNotAllowed, op)
	}
	return fmt.Errorf("discord: %s: %w", op, err)
}

// Short names for the shared errors.
var (
	errNoMessage  = surface.ErrNoMessage
	errNoPlace    = surface.ErrNoPlace
	errNotAllowed = surface.ErrNotAllowed
)
