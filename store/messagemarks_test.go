package store_test

import (
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

// FuzzCheckReaction: an accepted emoji is plain text of 1 to
// MaxEmojiBytes bytes; anything refused is ErrMarkInvalid.
func FuzzCheckReaction(f *testing.F) {
	for _, s := range []string{"👍", "👨‍👩‍👧", "<:party:123456789012345678>", "", " ", "a b", "\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, emoji string) {
		r, err := store.CheckReaction(store.Reaction{OrgID: "o", ConversationID: "c", Seq: 1, Emoji: emoji, Actor: "agent", CreatedAt: time.Unix(1, 0)})
		if err != nil {
			if !errors.Is(err, store.ErrMarkInvalid) {
				t.Errorf("%q: %v, not ErrMarkInvalid", emoji, err)
			}
			return
		}
		if r.Emoji == "" || len(r.Emoji) > store.MaxEmojiBytes || !utf8.ValidString(r.Emoji) || store.PlainText(r.Emoji) != r.Emoji {
			t.Errorf("accepted %q", emoji)
		}
	})
}
