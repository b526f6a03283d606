package history

import (
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/quiverhq/quiver/store"
)

// before is the most of the text a snippet shows ahead of the match, in
// runes (a quarter of the snippet when that is less), when the text
// around it is longer than the snippet.
const before = 80

// Snippet is the passage of text around the first occurrence of any of
// the words (folded, as store.HistoryWords gives them), at most n runes
// (n >= 3) with the ellipses that mark a cut: text as written (valid
// UTF-8, NFC, whitespace collapsed to one line), not folded. When no
// word is found (folding that changed a letter's length), the passage is
// the text's start.
func Snippet(text string, words []string, n int) string {
	r := []rune(strings.Join(strings.Fields(norm.NFC.String(store.PlainText(text))), " "))
	if len(r) <= n {
		return string(r)
	}
	at := firstMatch(r, words)
	width := n - 2 // room for an ellipsis at each end
	start := max(0, at-min(before, width/4))
	end := min(len(r), start+width)
	start = max(0, end-width)
	out := string(r[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(r) {
		out += "…"
	}
	return out
}

// firstMatch returns the rune index in r where the earliest of words
// begins, matched against r lower-cased rune by rune, or 0 when none is
// found.
func firstMatch(r []rune, words []string) int {
	var lower strings.Builder
	// runeAt maps each byte of lower to the index of the rune of r it
	// comes from.
	runeAt := make([]int, 0, len(r))
	for i, c := range r {
		l := strings.ToLower(string(c))
		lower.WriteString(l)
		for range len(l) {
			runeAt = append(runeAt, i)
		}
	}
	s := lower.String()
	best := -1
	for _, w := range words {
		if i := strings.Index(s, w); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return 0
	}
	return runeAt[best]
}
