package fetch

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Text that is not text. A font that does not say which characters its
// glyphs are (no ToUnicode map, codes that are glyph numbers of a subset
// font without usable tables) reads as U+FFFD, private-use characters,
// control characters or unassigned code points. A page where those make
// up more than maxBadShare of the characters (and at least minBadRunes of
// them) is reported as unreadable instead of handing the model garbage;
// a handful of icon glyphs on a page of text does not make it unreadable.
const (
	maxBadShare = 0.2
	minBadRunes = 4
)

// unreadablePage is the line that stands for a page whose characters are
// not text, and pdfUnreadableText the error for a document all of whose
// pages with characters are so.
const (
	unreadablePage    = "[page %d " + UnreadablePages
	pdfUnreadableText = "could not read this PDF as text: its fonts do not say which characters they show (it may need OCR)"
)

// UnreadablePages is the mark ReadPDF's text holds once per page that
// could not be read as text; fetch_url labels such a document's content
// accordingly.
const UnreadablePages = "could not be read as text: its fonts do not say which characters they show]"

// pageReadable reports whether a page's raw text is text: at most
// maxBadShare of its non-space characters are ones the engine could not
// map (unmapped of them), U+FFFD, private-use, control, surrogate or
// unassigned ones, and its letters do not hop between scripts (see
// scriptHops).
func pageReadable(s string, unmapped int) bool {
	total, bad := 0, unmapped
	for _, r := range s {
		if unicode.IsSpace(r) {
			continue
		}
		total++
		if notText(r) {
			bad++
		}
	}
	if bad >= minBadRunes && float64(bad) > maxBadShare*float64(total) {
		return false
	}
	pairs, hops := scriptHops(s)
	return pairs < minScriptPairs || float64(hops) <= maxHopShare*float64(pairs)
}

// A font without a map whose codes PDFium takes as Unicode (Identity-H
// codes, which are glyph numbers) gives assigned characters, but from a
// new script every character or two: Thai, Lao, Tibetan, Georgian, Ethiopic
// in one word. Real text keeps its script within a word (Han, kana and
// Hangul count as one script, as Japanese mixes them).
const (
	maxHopShare    = 0.3
	minScriptPairs = 8
)

// scriptHops counts the pairs of adjacent letters in s and those whose
// scripts differ.
func scriptHops(s string) (pairs, hops int) {
	prev := ""
	for _, r := range s {
		if !unicode.IsLetter(r) {
			prev = ""
			continue
		}
		sc := scriptOf(r)
		if prev != "" {
			pairs++
			if sc != prev {
				hops++
			}
		}
		prev = sc
	}
	return pairs, hops
}

// commonScripts are tried first by scriptOf.
var commonScripts = []string{"Latin", "Han", "Hiragana", "Katakana", "Cyrillic", "Greek", "Hangul", "Arabic", "Hebrew", "Devanagari", "Thai"}

// scriptOf is r's script, with Han, kana, Bopomofo and Hangul as one
// ("CJK").
func scriptOf(r rune) string {
	name := ""
	for _, n := range commonScripts {
		if unicode.Is(unicode.Scripts[n], r) {
			name = n
			break
		}
	}
	if name == "" {
		for n, t := range unicode.Scripts {
			if unicode.Is(t, r) {
				name = n
				break
			}
		}
	}
	switch name {
	case "Han", "Hiragana", "Katakana", "Bopomofo", "Hangul":
		return "CJK"
	}
	return name
}

// notText reports a character no font that maps its glyphs gives.
func notText(r rune) bool {
	return r == unicode.ReplacementChar || unicode.In(r, unicode.Co, unicode.Cc, unicode.Cs) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cf)
}

// pdfPageTexts lays out a document's pages in order, each under its
// "--- page N ---" line, until the text reaches maxPDFText.
type pdfPageTexts struct {
	b strings.Builder
	// total is the page count the document declares.
	total int
	// read counts the pages laid out; failed, unreadable and withText
	// those that failed to parse, were not text, and had text.
	read, failed, unreadable, withText int
	// cut is set once the text reached maxPDFText and was cut there.
	cut bool
}

// full reports that no more pages fit.
func (p *pdfPageTexts) full() bool { return p.cut }

// add lays out the next page, raw as the engine gave it, with unmapped
// of its characters the engine could not map to Unicode, or err when the
// page failed to parse.
func (p *pdfPageTexts) add(raw string, unmapped int, err error) {
	n := p.read + 1
	var t string
	switch {
	case err != nil:
		p.failed++
		t = "[this page could not be read]"
	case !pageReadable(raw, unmapped):
		p.unreadable++
		t = fmt.Sprintf(unreadablePage, n)
	default:
		if t = tidy(squeezeSpaces(cleanLines(raw))); t == "" {
			t = "[no text on this page]"
		} else {
			p.withText++
		}
	}
	if p.b.Len() > 0 {
		p.b.WriteString("\n\n")
	}
	fmt.Fprintf(&p.b, "--- page %d ---\n%s", n, t)
	p.read++
	if p.b.Len() > maxPDFText {
		s := cutText(p.b.String(), maxPDFText)
		p.b.Reset()
		p.b.WriteString(s + fmt.Sprintf("\n\n[The text stops part-way through page %d of %d: fetch_url keeps at most %s of a PDF's text.]", p.read, max(p.total, p.read), byteSize(maxPDFText+pdfNoteRoom)))
		p.cut = true
	}
}

// text is the document's text, with a note when it holds fewer pages than
// the document has. It fails when no page could be parsed, when the pages
// that have characters are all not text, and when no page has text.
func (p *pdfPageTexts) text() (string, error) {
	switch {
	case p.read == 0:
		return "", &fetchError{msg: pdfUnreadable, err: errors.New("pdf: no pages found")}
	case p.failed == p.read:
		return "", &fetchError{msg: pdfUnreadable, err: errors.New("pdf: no page could be read")}
	case p.withText == 0 && p.unreadable > 0:
		return "", &fetchError{msg: pdfUnreadableText, err: errors.New("pdf: no page's characters are text")}
	case p.withText == 0:
		return "", &fetchError{msg: pdfNoText}
	case !p.cut && p.read < p.total:
		p.b.WriteString(fmt.Sprintf("\n\n[fetch_url read the first %d of the document's %d pages.]", p.read, p.total))
	}
	return p.b.String(), nil
}

// cleanLines is clean for a whole page: line breaks (PDFium ends lines
// with CR LF) are kept.
func cleanLines(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.Join(lines, "\n")
}
