package ids

import (
	"strings"
	"unicode"
)

// maxSlugRunes bounds a slug, so that an id made from a long display name
// still fits one path segment and one log field.
const maxSlugRunes = 64

// Slug turns a display name ("Ana Lima", "Acme Corp.") into a stable id
// usable as one path segment: its letters and digits (any script),
// lower-cased, each run of anything else becoming one '-', with none at
// either end, cut to 64 runes. The same name always gives the same slug;
// names that differ only in case or punctuation give the same one. A name
// with no letter or digit (and "") gives def, which is returned as given.
func Slug(name, def string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return def
	}
	if r := []rune(out); len(r) > maxSlugRunes {
		out = string(r[:maxSlugRunes])
	}
	return out
}
