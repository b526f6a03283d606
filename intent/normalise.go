package intent

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

var folder = cases.Fold()

// quotes maps typographic apostrophes and quotes to ASCII, so "can’t"
// matches "can't".
var quotes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u02bc", "'", "\uff07", "'", "\u201c", "\"", "\u201d", "\"")

// Normalise returns text as triggers are matched against it: NFKC,
// case-folded, typographic quotes made ASCII, every run of whitespace one
// space, trimmed.
func Normalise(s string) string {
	s = norm.NFKC.String(s)
	s = folder.String(s)
	s = quotes.Replace(s)
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
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
