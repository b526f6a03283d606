package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/store"
)

func TestMemoryTerms(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"Folded", "Hà NỘI, Hà Nội!", []string{"hà", "ha", "nội", "noi"}},
		{"Decomposed", "Ha\u0300 No\u0323\u0302i", []string{"hà", "ha", "nội", "noi"}},
		{"DStroke", "Đà Nẵng", []string{"đà", "da", "nẵng", "nang"}},
		{"OneLetterWordsDropped", "the user's cat, a B plan", []string{"the", "user", "cat", "plan"}},
		{"Digits", "room 9 at 9:30", []string{"room", "9", "at", "30"}},
		{"Japanese", "毎朝コーヒー", []string{"毎朝", "朝コ", "コー", "ーヒ", "ヒー"}},
		{"MixedScripts", "東京tower", []string{"東京", "tower"}},
		{"SingleHan", "茶 tea", []string{"茶", "tea"}},
		{"Syntax", `"a" OR b* NEAR(c d) x:y`, []string{"or", "near"}},
		{"TooLong", strings.Repeat("x", store.MaxMemoryTermBytes+1) + " ok", []string{"ok"}},
		{"None", "!!! ??? ...", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := store.MemoryTerms(c.text); !slices.Equal(got, c.want) {
				t.Errorf("MemoryTerms(%q) = %q, want %q", c.text, got, c.want)
			}
		})
	}
	var words []string
	for i := range store.MaxMemoryQueryTerms + 10 {
		words = append(words, strings.Repeat("w", i+2))
	}
	if got := store.MemoryTermLimit(strings.Join(words, " ")); len(got) != store.MaxMemoryQueryTerms {
		t.Errorf("MemoryTermLimit kept %d terms, want %d", len(got), store.MaxMemoryQueryTerms)
	}
}

func TestCheckMemorySearch(t *testing.T) {
	ok := store.MemorySearch{Text: strings.Repeat("ữ", store.MaxMemoryQueryRunes)}
	if err := store.CheckMemorySearch(ok); err != nil {
		t.Errorf("a text at the cap: %v", err)
	}
	ok.Text += "x"
	if err := store.CheckMemorySearch(ok); !errors.Is(err, store.ErrMemoryInvalid) {
		t.Errorf("a text over the cap: %v", err)
	}
}
