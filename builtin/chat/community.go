package chat

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/surface"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// The tools of surfaces with a community (Discord): declared where the
// surface has stickers, avatars and blocking, left out with the
// surface's reason elsewhere (the web chat).

var (
	//go:embed select_sticker.md
	stickerDescription string
	//go:embed view_profile_picture.md
	avatarDescription string
	//go:embed block_user.md
	blockDescription string
	//go:embed unblock_user.md
	unblockDescription string
)

// MaxStickers bounds select_sticker's list.
const MaxStickers = 50

// MaxReasonRunes bounds block_user's reason.
const MaxReasonRunes = 300

// StickerInput is select_sticker's arguments.
type StickerInput struct {
	Action    string `json:"action" jsonschema:"list or send"`
	StickerID string `json:"sticker_id,omitempty" jsonschema:"for send: the sticker's id, from list"`
}

func stickerTool(cfg Config) *tool.Tool {
	const name = "select_sticker"
	want := surface.Capabilities(surface.Stickers)
	return tool.New(tool.Spec{
		Name: name, Family: FamilySticker, Macros: []string{"sticker_tool"},
		Description: stickerDescription, Access: tool.Write, Requires: surface.Requires(want),
		Limits: []tool.Limit{{Name: "stickers", Value: MaxStickers}},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["action"].Enum = []any{"list", "send"}
			s.Properties["sticker_id"].MaxLength = ptr(100)
		},
	}, func(ctx context.Context, sc tool.Scope, in StickerInput) (changed, error) {
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return changed{}, err
		}
		st := sf.(surface.Stickerer)
		if in.Action == "list" {
			all, err := st.Stickers(ctx, sc)
			if err != nil {
				return changed{}, refusal(name, "", err)
			}
			return changed{text: stickerList(all)}, nil
		}
		if in.StickerID == "" {
			return changed{}, errors.New("give the sticker_id to send: list them with action \"list\"")
		}
		if err := st.SendSticker(ctx, sc, in.StickerID); err != nil {
			return changed{}, refusal(name, "", err)
		}
		return changed{text: "Sent the sticker."}, nil
	})
}

func stickerList(all []surface.Sticker) string {
	if len(all) == 0 {
		return "This community has no stickers."
	}
	var b strings.Builder
	b.WriteString("Stickers:\n")
	for i, s := range all {
		if i == MaxStickers {
			fmt.Fprintf(&b, "(%d more not listed)\n", len(all)-MaxStickers)
			break
		}
		fmt.Fprintf(&b, "- %s: %s", s.ID, s.Name)
		if s.Description != "" {
			b.WriteString(" — " + preview(s.Description))
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// AvatarInput is view_profile_picture's arguments.
type AvatarInput struct {
	User string `json:"user,omitempty" jsonschema:"omit for the person, \"self\" for yours, or a member's id"`
}

// avatar is view_profile_picture's answer: the picture for a vision
// model, a sentence for the rest.
type avatar struct{ img surface.Image }

func (a avatar) ModelText() string { return "The profile picture is attached." }

func (a avatar) ToolImages() []tool.Image { return []tool.Image{{MIME: a.img.MIME, Data: a.img.Data}} }

func avatarTool(cfg Config) *tool.Tool {
	const name = "view_profile_picture"
	want := surface.Capabilities(surface.Avatars)
	return tool.New(tool.Spec{
		Name: name, Family: FamilyAvatar, Macros: []string{"profile_picture_tool"},
		Description: avatarDescription, Access: tool.Read,
		Requires: func(s turn.Selection) string {
			if r := surface.Why(s.Surface, want); r != "" {
				return r
			}
			if !s.Model.Caps.Vision {
				return "the model cannot see images"
			}
			return ""
		},
		Tune: func(s *jsonschema.Schema) { s.Properties["user"].MaxLength = ptr(100) },
	}, func(ctx context.Context, sc tool.Scope, in AvatarInput) (avatar, error) {
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return avatar{}, err
		}
		img, err := sf.(surface.AvatarReader).Avatar(ctx, sc, in.User)
		if err != nil {
			return avatar{}, refusal(name, "", err)
		}
		if len(img.Data) > tool.MaxImageBytes {
			return avatar{}, fmt.Errorf("the picture is %d bytes; the limit is %d", len(img.Data), tool.MaxImageBytes)
		}
		return avatar{img: img}, nil
	})
}

// BlockInput is block_user's arguments.
type BlockInput struct {
	UserID string `json:"user_id" jsonschema:"the member's id"`
	Reason string `json:"reason" jsonschema:"why, in a sentence"`
}

// UnblockInput is unblock_user's arguments.
type UnblockInput struct {
	UserID string `json:"user_id" jsonschema:"the member's id"`
}

func blockTool(cfg Config) *tool.Tool {
	const name = "block_user"
	want := surface.Capabilities(surface.Blocking)
	return tool.New(tool.Spec{
		Name: name, Family: FamilyBlocking, Macros: []string{"block_user_tool"},
		Description: blockDescription, Access: tool.Write, Requires: surface.Requires(want),
		Limits: []tool.Limit{{Name: "reason_chars", Value: MaxReasonRunes}},
		Tune: func(s *jsonschema.Schema) {
			s.Properties["user_id"].MaxLength = ptr(100)
			s.Properties["reason"].MaxLength = ptr(MaxReasonRunes)
		},
	}, func(ctx context.Context, sc tool.Scope, in BlockInput) (string, error) {
		reason, err := checkText("the reason", in.Reason, MaxReasonRunes)
		if err != nil {
			return "", err
		}
		if in.UserID == "" || in.UserID == sc.UserID {
			return "", errors.New("give the id of the member to block (not the person you are talking with)")
		}
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return "", err
		}
		if err := sf.(surface.Blocker).Block(ctx, sc, in.UserID, reason); err != nil {
			return "", refusal(name, "", err)
		}
		return "Blocked the member: you will not answer them until unblocked.", nil
	})
}

func unblockTool(cfg Config) *tool.Tool {
	const name = "unblock_user"
	want := surface.Capabilities(surface.Blocking)
	return tool.New(tool.Spec{
		Name: name, Family: FamilyBlocking, Macros: []string{"unblock_user_tool"},
		Description: unblockDescription, Access: tool.Write, Requires: surface.Requires(want),
		Tune: func(s *jsonschema.Schema) { s.Properties["user_id"].MaxLength = ptr(100) },
	}, func(ctx context.Context, sc tool.Scope, in UnblockInput) (string, error) {
		if in.UserID == "" {
			return "", errors.New("give the id of the member to unblock")
		}
		sf, err := resolve(cfg, sc, name, want)
		if err != nil {
			return "", err
		}
		if err := sf.(surface.Blocker).Unblock(ctx, sc, in.UserID); err != nil {
			return "", refusal(name, "", err)
		}
		return "Unblocked the member.", nil
	})
}
