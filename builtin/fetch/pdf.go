package fetch

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pdfType is the media type fetch_url reads as a PDF.
const pdfType = "application/pdf"

// Limits of PDF reading (the engine's own are in pdfium.go).
const (
	// maxPDFPages is how many pages are read; the text says when the
	// document has more.
	maxPDFPages = 300
	// maxPDFText is how many bytes of text are kept: with the closing note
	// (pdfNoteRoom) at most what the page cache holds, so that paging
	// through a long PDF parses it once.
	maxPDFText  = maxCachedChars - pdfNoteRoom
	pdfNoteRoom = 1 << 10
)

// Messages for PDFs fetch_url cannot read. They never quote the file.
const (
	pdfUnreadable = "could not read this PDF: the file is damaged or uses features the reader does not support"
	pdfEncrypted  = "could not read this PDF: it is encrypted"
	pdfTooComplex = "could not read this PDF: it takes more work to read than fetch_url allows"
	pdfNoText     = "this PDF has no extractable text (it may be scanned images)"
)

// pdfTooLarge is the error for a PDF cut at the byte cap: its
// cross-reference table is at the end, so a cut file cannot be parsed.
func pdfTooLarge(limit int64) error {
	return fmt.Errorf("this PDF is larger than the %s fetch_url reads, and a cut PDF cannot be parsed; look for an HTML or text version of the document", byteSize(limit))
}

// byteSize spells n as MiB or KiB when it is a whole number of them.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// squeezeSpaces trims each line and turns runs of spaces into one: the
// layout puts a space wherever the pen jumped, and text that was laid out
// with spaces for alignment brings its own.
func squeezeSpaces(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// cutText returns the longest prefix of s of at most n bytes that ends
// between characters.
func cutText(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:min(n, len(s))]
}

// clean drops control characters, which fonts without a usable encoding
// pass through from the raw codes, and makes s valid UTF-8.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
