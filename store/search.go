package store

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Bounds on conversation titles and searches.
const (
	// MaxTitleRunes is how long a stored title may be: CleanTitle cuts a
	// longer one.
	MaxTitleRunes = 200
	// MaxSearchRunes is how long a search text may be
	// (ConversationQuery.Text): the surfaces refuse a longer one.
	MaxSearchRunes = 100
)

// FoldText is s as conversation search compares it: PlainText, lower
// case (Unicode's simple mapping, so "Đà Nẵng" and "đà nẵng" match) and
// in Unicode normal form C (so a letter typed as one code point matches
// the same letter typed as a base and a combining mark). Both the stored
// text and the query are folded alike, in Go, so that every backend
// matches the same conversations whatever its locale.
func FoldText(s string) string {
	return norm.NFC.String(strings.ToLower(PlainText(s)))
}

// LikeContains is the LIKE pattern, with '\' as its escape character,
// that matches the strings containing text literally: '%', '_' and '\'
// in text match themselves.
func LikeContains(text string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(text) + "%"
}

// CleanTitle is a title as every store keeps it, however it was set:
// valid UTF-8; each control character (tab and newline included, C1
// controls too) and each bidirectional override or isolate, which could
// make a title read as something else, taken out as a space; runs of
// spaces made one; trimmed; and cut to MaxTitleRunes runes (never inside
// one).
func CleanTitle(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || isBidiControl(r)
	}), " ")
	if utf8.RuneCountInString(s) <= MaxTitleRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxTitleRunes {
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}

// TitleControl reports whether s holds a character CleanTitle takes out
// other than a plain space: a surface that refuses such titles (rather
// than cleaning them) asks it.
func TitleControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r != ' ' && (unicode.IsControl(r) || isBidiControl(r))
	})
}

// isBidiControl reports the bidirectional embeddings, overrides and
// isolates (U+202A–U+202E, U+2066–U+2069) and the marks U+200E, U+200F
// and U+061C.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}
