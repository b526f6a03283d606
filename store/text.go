package store

import (
	"strings"
	"unicode/utf8"
)

// PlainText is s as every backend stores it in a text field (a title, a
// question, a name): valid UTF-8, with each invalid byte sequence
// replaced by U+FFFD and each NUL and other C0 control except tab and
// newline replaced by a space. PostgreSQL's text type refuses NUL bytes
// and invalid UTF-8, which a model's or a person's string may hold;
// callers pass such strings through PlainText where they enter, so that
// both backends store the same thing. Message content, result bodies and
// documents are stored as bytes and need no cleaning.
func PlainText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

// isControl reports a C0 control other than tab and newline, or DEL.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f
}
