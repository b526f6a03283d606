// Package chat provides the message tools: what an agent may do where
// the conversation happens, over package surface. message_metadata lists
// recent messages with their ids; interact_with_message reacts or
// replies to one; manage_message pins, unpins, edits or deletes;
// create_thread starts a thread; cross_channel_message posts elsewhere;
// select_sticker, view_profile_picture, block_user and unblock_user are
// declared only where the surface has stickers, avatars and blocking.
//
// Each tool is declared only where the turn's surface has the
// capability it needs (surface.Requires), with the surface's reason
// otherwise, and checks it again when it runs. Where the tools act comes
// from the turn's scope, never from arguments: a message id names a
// message of the scope's conversation or nothing, and a refusal says no
// more than that.
package chat

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
)

// The families the tools belong to. manage_message, thread_creation,
// sticker and user_blocking are gated by the switches of those names
// (sticker_usage for stickers; registry's switch table).
const (
	FamilyMetadata     = "message_metadata"
	FamilyInteract     = "interact_with_message"
	FamilyManage       = "manage_message"
	FamilyThread       = "thread_creation"
	FamilyCrossChannel = "cross_channel_message"
	FamilySticker      = "sticker"
	FamilyAvatar       = "view_profile_picture"
	FamilyBlocking     = "user_blocking"
)

// Bounds the tools hold to.
const (
	// MaxReplyRunes bounds a reply to a message: a short reply, not an
	// answer (the answer is the agent's own message).
	MaxReplyRunes = 500
	// MaxTextRunes bounds an edit, a thread's first message and a post:
	// Discord's message limit.
	MaxTextRunes = 2000
	// MaxThreadNameRunes bounds a thread's name: Discord's limit.
	MaxThreadNameRunes = 100
	// MaxMetadataMessages bounds message_metadata's listing;
	// DefaultMetadataMessages is what it lists unless asked.
	MaxMetadataMessages     = 50
	DefaultMetadataMessages = 20
	// MaxPreviewRunes bounds each message's text in the listing.
	MaxPreviewRunes = 300
	// MaxPlaces bounds cross_channel_message's list of places.
	MaxPlaces = 20
)

// Surfaces resolves a turn's surface by name (tool.Scope.Surface, ""
// is surface.WebChat): the surfaces the deployment runs.
type Surfaces interface {
	Surface(name string) (surface.Surface, bool)
}

// Config builds the tools. The zero value builds every tool, whose
// calls fail with an infrastructure error (commands that never
// dispatch).
type Config struct {
	// Surfaces resolves the turn's surface; nil resolves none.
	Surfaces Surfaces
	// Now is the clock for relative times; nil means time.Now.
	Now func() time.Time
}

// Set is a fixed map of surfaces by name, a Surfaces.
type Set map[string]surface.Surface

// Surface returns the named surface; "" is surface.WebChat.
func (s Set) Surface(name string) (surface.Surface, bool) {
	if name == "" {
		name = surface.WebChat
	}
	sf, ok := s[name]
	return sf, ok
}

// Tools returns every message tool, in registration order.
func Tools(cfg Config) []*tool.Tool {
	return []*tool.Tool{
		metadataTool(cfg), interactTool(cfg), manageTool(cfg), threadTool(cfg), crossChannelTool(cfg),
		stickerTool(cfg), avatarTool(cfg), blockTool(cfg), unblockTool(cfg),
	}
}

// resolve returns the scope's surface when it has want, else an error
// for the model saying why not (the surface's reason), or an
// infrastructure error when no surface serves the scope.
func resolve(cfg Config, sc tool.Scope, name string, want surface.Capabilities) (surface.Surface, error) {
	if cfg.Surfaces == nil {
		return nil, tool.Infra(fmt.Errorf("%s: no surface is configured", name))
	}
	sf, ok := cfg.Surfaces.Surface(sc.Surface)
	if !ok {
		return nil, tool.Infra(fmt.Errorf("%s: surface %q is not running", name, sc.Surface))
	}
	if sf.Capabilities()&want != want {
		return nil, errors.New(surface.Why(sf.Name(), want))
	}
	return sf, nil
}

// refusal words a surface error for the model: the refusals every
// surface shares say only what failed, anything else is an
// infrastructure error.
func refusal(name, id string, err error) error {
	switch {
	case errors.Is(err, surface.ErrNoMessage) && id == "":
		return errors.New("this turn has no conversation whose messages you can act on")
	case errors.Is(err, surface.ErrNoMessage):
		return fmt.Errorf("no message with id %q in this conversation: call message_metadata for the ids", id)
	case errors.Is(err, surface.ErrNoPlace):
		return errors.New("no such conversation to post in: list them with action \"list\"")
	case errors.Is(err, surface.ErrNotAllowed), errors.Is(err, surface.ErrLimit), errors.Is(err, surface.ErrBusy),
		errors.Is(err, surface.ErrUnsupported), errors.Is(err, store.ErrMarkInvalid):
		return err
	}
	return tool.Infra(fmt.Errorf("%s: %w", name, err))
}

// checkText trims text and refuses it blank or over limit runes.
func checkText(what, text string, limit int) (string, error) {
	text = strings.TrimSpace(text)
	n := len([]rune(text))
	switch {
	case text == "":
		return "", fmt.Errorf("%s is empty", what)
	case n > limit:
		return "", fmt.Errorf("%s is %d characters; the limit is %d", what, n, limit)
	}
	return text, nil
}

// changed is a tool's answer with the change it made, for the surface to
// show live.
type changed struct {
	text    string
	changes []tool.MessageChange
}

func (c changed) ModelText() string { return c.text }

func (c changed) ToolEffect() tool.Effect { return tool.Effect{Messages: c.changes} }
