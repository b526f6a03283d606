package document

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// Bounds of a DOCX archive, against zip bombs: a small file that
// declares, or inflates to, far more than it holds.
const (
	// MaxDOCXEntries is how many entries the archive may list (a long
	// report holds a few dozen; one with many images a few hundred).
	MaxDOCXEntries = 10_000
	// MaxDOCXPartBytes bounds the inflated word/document.xml.
	MaxDOCXPartBytes = 64 << 20
	// MaxDOCXInflatedBytes bounds everything inflated from one archive.
	MaxDOCXInflatedBytes = 64 << 20
)

// docxBody is the part that holds a DOCX's main text.
const docxBody = "word/document.xml"

// readDOCX extracts the text of a DOCX: one line per paragraph, in
// document order, and a table as one line per row with its cells joined
// by " | ". Runs' text (w:t) is kept; tabs (w:tab) become tabs, breaks
// (w:br, w:cr) new lines; deleted text, field codes and everything
// outside the body part are left out.
func readDOCX(label string, data []byte) (Document, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Document{}, refuse(ErrUnreadable, "%s is a damaged ZIP archive", label)
	}
	if len(zr.File) > MaxDOCXEntries {
		return Document{}, refuse(ErrTooLarge, "%s lists %d archive entries; the limit is %d", label, len(zr.File), MaxDOCXEntries)
	}
	var body *zip.File
	for _, f := range zr.File {
		if f.Name == docxBody {
			body = f
			break
		}
	}
	if body == nil {
		return Document{}, refuse(ErrBinary, "%s is a ZIP archive but not a DOCX document; only PDF, DOCX and UTF-8 text can be read", label)
	}
	if body.UncompressedSize64 > MaxDOCXPartBytes {
		return Document{}, refuse(ErrTooLarge, "%s: its text part inflates to %d bytes; the limit is %s", label, body.UncompressedSize64, byteSize(MaxDOCXPartBytes))
	}
	rc, err := body.Open()
	if err != nil {
		return Document{}, refuse(ErrUnreadable, "%s is a damaged DOCX", label)
	}
	defer rc.Close()
	// The declared size is the archive's claim; the limit holds whatever
	// the stream inflates to.
	lr := &limitReader{r: rc, n: min(MaxDOCXPartBytes, MaxDOCXInflatedBytes)}
	text, cut, err := docxText(lr)
	switch {
	case lr.over:
		return Document{}, refuse(ErrTooLarge, "%s: its text part inflates past %s", label, byteSize(MaxDOCXPartBytes))
	case err != nil:
		return Document{}, refuse(ErrUnreadable, "%s is a damaged DOCX (%s)", label, oneLine(err.Error()))
	}
	return Document{Kind: DOCX, Text: text, Truncated: cut}, nil
}

// limitReader reads at most n bytes and records an attempt to read more.
type limitReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.over = true
			return 0, errors.New("part too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// docxWriter gathers a document's text as its XML streams by.
type docxWriter struct {
	out   strings.Builder
	para  strings.Builder // the paragraph being read
	cells []*strings.Builder
	rows  [][]string // one per open table: the cells of its current row
	cut   bool
}

// docxText streams document.xml from r and returns its text, cut at
// MaxTextBytes.
func docxText(r io.Reader) (string, bool, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	var w docxWriter
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			inText = w.start(t.Name.Local)
		case xml.EndElement:
			inText = false
			w.end(t.Name.Local)
		case xml.CharData:
			if inText {
				w.para.Write(t)
			}
		}
		if w.out.Len() > MaxTextBytes {
			w.cut = true
			break
		}
	}
	w.endParagraph()
	text, cut := capText(strings.TrimRight(w.out.String(), "\n"), MaxTextBytes)
	return text, cut || w.cut, nil
}

// start handles an opening tag and reports whether its character data
// is text.
func (w *docxWriter) start(name string) bool {
	switch name {
	case "t":
		return true
	case "tab":
		w.para.WriteByte('\t')
	case "br", "cr":
		w.para.WriteByte('\n')
	case "tbl":
		w.endParagraph()
		w.rows = append(w.rows, nil)
	case "tr":
		if len(w.rows) > 0 {
			w.rows[len(w.rows)-1] = w.rows[len(w.rows)-1][:0]
		}
	case "tc":
		w.cells = append(w.cells, &strings.Builder{})
	}
	return false
}

// end handles a closing tag.
func (w *docxWriter) end(name string) {
	switch name {
	case "p":
		w.endParagraph()
	case "tc":
		if len(w.cells) == 0 {
			return
		}
		w.endParagraph()
		cell := strings.TrimSpace(w.cells[len(w.cells)-1].String())
		w.cells = w.cells[:len(w.cells)-1]
		if len(w.rows) > 0 {
			w.rows[len(w.rows)-1] = append(w.rows[len(w.rows)-1], cell)
		}
	case "tr":
		if len(w.rows) == 0 {
			return
		}
		row := w.rows[len(w.rows)-1]
		w.emit(strings.Join(row, " | "))
		w.rows[len(w.rows)-1] = row[:0]
	case "tbl":
		if len(w.rows) > 0 {
			w.rows = w.rows[:len(w.rows)-1]
		}
	}
}

// endParagraph emits the paragraph read so far, if any.
func (w *docxWriter) endParagraph() {
	if w.para.Len() == 0 {
		return
	}
	w.emit(w.para.String())
	w.para.Reset()
}

// emit writes one paragraph or row: into the open cell inside a table,
// as a line of the document outside one.
func (w *docxWriter) emit(s string) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.TrimSpace(s) == "" {
		return
	}
	if n := len(w.cells); n > 0 {
		c := w.cells[n-1]
		if c.Len() > 0 {
			c.WriteByte(' ')
		}
		if c.Len() < MaxTextBytes {
			c.WriteString(s)
		}
		return
	}
	w.out.WriteString(s)
	w.out.WriteByte('\n')
}
