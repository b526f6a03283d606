package document

import "strings"

// PageRunes is the most characters (runes) one page of a document holds:
// what read_document returns per call.
const PageRunes = 40_000

// Page is one page of a text.
type Page struct {
	// Number counts pages from 1; Pages is how many the text has (at
	// least 1: an empty text is one empty page).
	Number, Pages int
	Text          string
}

// PageOf returns page n (from 1) of text cut into pages of at most
// PageRunes runes, each ending after its last line break in the final
// tenth when it has one. ok is false for n outside [1, Pages]; Pages is
// set anyway.
func PageOf(text string, n int) (p Page, ok bool) {
	bounds := pageBounds(text)
	p.Pages = len(bounds) - 1
	if n < 1 || n > p.Pages {
		return Page{Pages: p.Pages}, false
	}
	return Page{Number: n, Pages: p.Pages, Text: text[bounds[n-1]:bounds[n]]}, true
}

// pageBounds returns the byte offsets where pages start, and len(text).
func pageBounds(text string) []int {
	bounds := []int{0}
	for start := 0; start < len(text); {
		end, runes := start, 0
		for end < len(text) && runes < PageRunes {
			_, size := decodeRune(text[end:])
			end += size
			runes++
		}
		if end < len(text) {
			tail := text[start:end]
			if i := strings.LastIndexByte(tail, '\n'); i >= 0 && runeCount(tail[i:]) <= PageRunes/10 {
				end = start + i + 1
			}
		}
		bounds = append(bounds, end)
		start = end
	}
	if len(bounds) == 1 {
		bounds = append(bounds, 0)
	}
	return bounds
}
