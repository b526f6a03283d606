package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// pdfType is the media type fetch_url reads as a PDF.
const pdfType = "application/pdf"

// Limits of PDF reading. A PDF is closer to a program than to a page: these
// bound what one fetched file can cost, whatever it contains.
const (
	// maxPDFPages is how many pages are read; the text says when the
	// document has more.
	maxPDFPages = 300
	// maxPDFText is how many bytes of text are kept: with the closing note
	// (pdfNoteRoom) at most what the page cache holds, so that paging
	// through a long PDF parses it once.
	maxPDFText  = maxCachedChars - pdfNoteRoom
	pdfNoteRoom = 1 << 10
	// maxPDFContent bounds the decompressed bytes of page content and font
	// maps interpreted for one file: a few megabytes of Flate data can
	// inflate a thousandfold.
	maxPDFContent = 64 << 20
	// maxPDFDecode bounds the work of decoding shown text, in bytes shown
	// times the cost of a lookup in their font's map (see pdfFont.cost):
	// the parser searches a map entry by entry, so a font with a huge map
	// makes every character slow.
	maxPDFDecode = 1 << 28
	// pdfReadBudget and pdfReadFactor bound the raw bytes the parser may
	// read: the first plus the second times the file's size. The parser
	// re-reads an object, 4 KiB at a time, each time it is used (real
	// documents cost 30 KiB or so a page), and a file whose references run
	// in a circle would read forever; parsing runs at about 15 MiB a
	// second, so the bound is a few seconds of work at worst.
	pdfReadBudget = 16 << 20
	pdfReadFactor = 4
	// maxPDFTreeDepth bounds the depth of the page tree walked; pdfPages
	// also visits at most one inner node per page, so that a tree made
	// circular is still walked in bounded time.
	maxPDFTreeDepth = 32
)

// Messages for PDFs fetch_url cannot read. They never quote the file.
const (
	pdfUnreadable = "could not read this PDF: the file is damaged or uses features the reader does not support"
	pdfEncrypted  = "could not read this PDF: it is encrypted"
	pdfTooComplex = "could not read this PDF: it takes more work to read than fetch_url allows"
	pdfNoText     = "this PDF has no extractable text (it may be scanned images)"
)

// errPDFBudget is what the file's reader answers once the parser has read
// more than its budget.
var errPDFBudget = errors.New("pdf: read budget exhausted")

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

// pdfText extracts the title and the text of a PDF: each page under a
// "--- page N ---" line, pages in document order, lines as laid out on the
// page. The text is valid UTF-8 and at most maxCachedChars bytes; a note
// at the end says when pages were left out. Every failure, a panic in the
// parser included, is a *fetchError whose message suits the model and
// never quotes the file.
func pdfText(body []byte) (title, text string, err error) {
	return newPDFSource(body).text()
}

// PDFError is an error whose message is shown to the model as is: what a
// PDF reader outside this process reports.
func PDFError(msg string) error { return &fetchError{msg: msg} }

// text is pdfText within s's budgets.
func (s *pdfSource) text() (title, text string, err error) {
	defer func() {
		if x := recover(); x != nil {
			title, text, err = "", "", s.failure(fmt.Errorf("pdf: panic: %v", x))
		}
	}()
	if err := checkPDF(s.body); err != nil {
		return "", "", &fetchError{msg: pdfUnreadable, err: err}
	}
	r, err := pdf.NewReader(s, int64(len(s.body)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || bytes.Contains(s.body, []byte("/Encrypt")) {
			return "", "", &fetchError{msg: pdfEncrypted, err: err}
		}
		return "", "", s.failure(err)
	}
	title = oneLine(r.Trailer().Key("Info").Key("Title").Text())
	pages, declared := pdfPages(r, maxPDFPages)
	if text, err = s.pagesText(pages, max(declared, len(pages))); err != nil {
		return "", "", err
	}
	return title, text, nil
}

// pagesText lays out pages in order, each under its "--- page N ---" line,
// until the text reaches maxPDFText, and ends with a note when it holds
// fewer than total pages. A page that fails to parse is marked as
// unreadable and the rest are still read. It fails when no page has text.
func (s *pdfSource) pagesText(pages []pdf.Value, total int) (string, error) {
	if len(pages) == 0 {
		return "", &fetchError{msg: pdfUnreadable, err: errors.New("pdf: no pages found")}
	}
	var b strings.Builder
	fonts := fontCache{}
	hasText, failed, read := false, 0, 0
	for i, p := range pages {
		t, err := s.pageText(p, fonts)
		if errors.Is(err, errPDFBudget) || s.spent() {
			if read == 0 {
				return "", s.failure(err)
			}
			break
		}
		switch t = tidy(squeezeSpaces(t)); {
		case err != nil:
			failed++
			t = "[this page could not be read]"
		case t == "":
			t = "[no text on this page]"
		default:
			hasText = true
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "--- page %d ---\n%s", i+1, t)
		read++
		if b.Len() > maxPDFText {
			text := cutText(b.String(), maxPDFText)
			return text + fmt.Sprintf("\n\n[The text stops part-way through page %d of %d: fetch_url keeps at most %s of a PDF's text.]", read, total, byteSize(maxPDFText+pdfNoteRoom)), nil
		}
	}
	switch {
	case failed == len(pages):
		return "", &fetchError{msg: pdfUnreadable, err: errors.New("pdf: no page could be read")}
	case !hasText:
		return "", &fetchError{msg: pdfNoText}
	case read < total:
		b.WriteString(fmt.Sprintf("\n\n[fetch_url read the first %d of the document's %d pages.]", read, total))
	}
	return b.String(), nil
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

// pageText lays out one page, recovering a panic in the parser as an error.
func (s *pdfSource) pageText(p pdf.Value, fonts fontCache) (text string, err error) {
	defer func() {
		if x := recover(); x != nil {
			text, err = "", fmt.Errorf("pdf: page: %v", x)
		}
	}()
	return layoutPage(p, fonts, &s.budget)
}

// pdfPages returns the page dictionaries of r in document order, at most
// limit, and the page count the document declares. It walks the page tree
// itself rather than asking the reader for page n each time: that is
// quadratic, and loops forever on a tree whose Kids lead back to an
// ancestor. An inner node met twice (by its printed form, which names its
// kids by reference) is skipped.
func pdfPages(r *pdf.Reader, limit int) (pages []pdf.Value, declared int) {
	root := r.Trailer().Key("Root").Key("Pages")
	declared = int(min(max(root.Key("Count").Int64(), 0), 1<<30))
	seen := map[string]bool{}
	var walk func(n pdf.Value, depth int)
	walk = func(n pdf.Value, depth int) {
		if n.Kind() != pdf.Dict || depth > maxPDFTreeDepth || len(seen) > limit {
			return
		}
		kids := n.Key("Kids")
		if n.Key("Type").Name() == "Page" || kids.Kind() != pdf.Array {
			pages = append(pages, n)
			return
		}
		if key := n.String(); !seen[key] {
			seen[key] = true
			for i := 0; i < kids.Len() && len(pages) < limit; i++ {
				walk(kids.Index(i), depth+1)
			}
		}
	}
	walk(root, 0)
	return pages, declared
}

// pdfSource is a PDF's bytes as the parser reads them, with a header it
// accepts and within a read budget, and the budget for laying out its
// pages. Not safe for concurrent use; one pdfText call owns it.
type pdfSource struct {
	body []byte
	// head replaces the first bytes of the file: the parser accepts only
	// "%PDF-1.0" to "%PDF-1.7" followed by a newline, and refuses PDF 2.0
	// files it reads perfectly well.
	head []byte
	// left is the raw bytes the parser may still read.
	left      int64
	exhausted bool
	budget    pdfBudget
}

// pdfBudget is the work left for laying out one file's pages. It is spent
// as pages are read and never refilled; a negative field means spent.
type pdfBudget struct {
	// content is the decompressed bytes of page content and font maps
	// still to interpret.
	content int64
	// decode is the work left for decoding shown text (maxPDFDecode).
	decode int64
}

func newPDFSource(body []byte) *pdfSource {
	s := &pdfSource{body: body, left: pdfReadBudget + int64(len(body))*pdfReadFactor,
		budget: pdfBudget{content: maxPDFContent, decode: maxPDFDecode}}
	if len(body) >= 9 && bytes.HasPrefix(body, []byte("%PDF-")) && isDigit(body[5]) && body[6] == '.' && isDigit(body[7]) {
		s.head = []byte("%PDF-1.7\n")
	}
	return s
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ReadAt implements io.ReaderAt over the body, with the header replaced,
// failing with errPDFBudget once the budget is spent.
func (s *pdfSource) ReadAt(p []byte, off int64) (int, error) {
	s.left -= int64(len(p))
	if s.left < 0 {
		s.exhausted = true
		return 0, errPDFBudget
	}
	if off < 0 || off >= int64(len(s.body)) {
		return 0, io.EOF
	}
	n := copy(p, s.body[off:])
	if off < int64(len(s.head)) {
		copy(p[:n], s.head[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// spent reports that a budget ran out.
func (s *pdfSource) spent() bool {
	return s.exhausted || s.budget.content < 0 || s.budget.decode < 0
}

// failure is the error for a parse that failed with cause: too complex
// when a budget ran out (the parser then fails wherever it was), else
// unreadable.
func (s *pdfSource) failure(cause error) error {
	if s.spent() {
		return &fetchError{msg: pdfTooComplex, err: cause}
	}
	return &fetchError{msg: pdfUnreadable, err: cause}
}
