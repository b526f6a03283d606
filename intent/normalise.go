package intent

import (
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// folders holds case folders: x/text documents a Caser as possibly
// stateful and not for concurrent use, so each call takes its own.
var folders = sync.Pool{New: func() any { return cases.Fold() }}

// fold case-folds s.
func fold(s string) string {
	c := folders.Get().(cases.Caser)
	defer folders.Put(c)
	c.Reset()
	return c.String(s)
}

// quotes maps typographic apostrophes and quotes to ASCII, so "can’t"
// matches "can't".
var quotes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u02bc", "'", "\uff07", "'", "\u201c", "\"", "\u201d", "\"")

// Normalise returns text as triggers are matched against it: invalid UTF-8
// replaced by U+FFFD, NFKC, case-folded, typographic quotes made ASCII,
// every run of whitespace one space, trimmed. The result is valid UTF-8
// and Normalise(Normalise(s)) == Normalise(s).
func Normalise(s string) string {
	if isASCII(s) {
		return normaliseASCII(s)
	}
	return normaliseText(s)
}

// normaliseText is Normalise for any text.
func normaliseText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = norm.NFKC.String(s)
	s = strings.Map(foldCherokee, fold(s))
	s = quotes.Replace(s)
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// isASCII reports whether s holds only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// asciiSpace reports whether b is one of the ASCII bytes unicode.IsSpace
// accepts.
func asciiSpace(b byte) bool {
	return b == ' ' || (b >= '\t' && b <= '\r')
}

// normaliseASCII is Normalise for ASCII text, in one pass: NFKC leaves
// ASCII as it is, case folding maps only A–Z (to a–z), the typographic
// quotes are not ASCII, and the only spaces are asciiSpace's. Most messages
// are ASCII, and the general path costs several passes and allocations.
func normaliseASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if asciiSpace(c) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// foldCherokee maps Cherokee letters to the capitals CaseFolding.txt folds
// them to. x/text's Fold turns capitals into small letters and small letters
// into capitals, so without this Normalise would flip between the two and
// not be idempotent.
func foldCherokee(r rune) rune {
	switch {
	case r >= 0xAB70 && r <= 0xABBF: // small letters a–mo
		return r - 0xAB70 + 0x13A0
	case r >= 0x13F8 && r <= 0x13FD: // small letters ye–mv
		return r - 8
	}
	return r
}

// wordRune reports whether r is part of a word for boundary checks:
// letters, digits, marks, '_' and '-'.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_' || r == '-'
}

// unspaced reports whether r belongs to a script written without spaces
// between words (or, for Hangul, with particles glued to words), where a
// trigger may match inside a longer word.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// hasUnspaced reports whether s contains a rune of an unspaced script.
func hasUnspaced(s string) bool {
	for _, r := range s {
		if unspaced(r) {
			return true
		}
	}
	return false
}
