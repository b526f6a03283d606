package fetch

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
)

// pdfDoc is a PDF file written by hand: objects numbered from 1 and a
// cross-reference table whose offsets are computed as the file is written.
type pdfDoc struct {
	// header is the first line; empty means "%PDF-1.4".
	header string
	// objects holds the body of object i+1.
	objects []string
	// trailer holds entries added to the trailer after /Size and /Root
	// (object 1).
	trailer string
}

// add appends an object and returns its number.
func (d *pdfDoc) add(body string) int {
	d.objects = append(d.objects, body)
	return len(d.objects)
}

// set replaces the body of object n.
func (d *pdfDoc) set(n int, body string) { d.objects[n-1] = body }

// bytes writes the file.
func (d *pdfDoc) bytes() []byte {
	var b bytes.Buffer
	header := d.header
	if header == "" {
		header = "%PDF-1.4"
	}
	b.WriteString(header + "\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(d.objects))
	for i, o := range d.objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(d.objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(d.objects)+1, d.trailer, xref)
	return b.Bytes()
}

// pdfStream is a stream object holding data; extra adds dictionary entries.
func pdfStream(extra, data string) string {
	return fmt.Sprintf("<< /Length %d%s >>\nstream\n%s\nendstream", len(data), extra, data)
}

// flateStream is a FlateDecode stream object holding data.
func flateStream(t testing.TB, data string) string {
	t.Helper()
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	if _, err := w.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return pdfStream(" /Filter /FlateDecode", b.String())
}

// pdfLiteral writes s as a PDF literal string.
func pdfLiteral(s string) string {
	return "(" + strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s) + ")"
}

// pdfUTF16 writes s as a UTF-16BE hex string with a byte-order mark, as
// PDF text strings outside Latin-1 are written.
func pdfUTF16(s string) string {
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	return b.String() + ">"
}

// linesContent is a content stream drawing each line in Helvetica 12 at
// the left margin, one line under the other.
func linesContent(lines []string) string {
	var b strings.Builder
	b.WriteString("BT /F1 12 Tf 72 720 Td 16 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "%s Tj T*\n", pdfLiteral(l))
	}
	b.WriteString("ET")
	return b.String()
}

// textPDF is a document whose pages draw the given content streams; title,
// when not empty, is its Info title (a PDF string, literal or hex). Page
// content is Flate-compressed when flate is set.
func textPDF(t testing.TB, title string, flate bool, contents ...string) *pdfDoc {
	t.Helper()
	d := &pdfDoc{}
	d.add("<< /Type /Catalog /Pages 2 0 R >>")
	pagesObj := d.add("") // filled in below, once the kids are known
	font := d.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, c := range contents {
		stream := pdfStream("", c)
		if flate {
			stream = flateStream(t, c)
		}
		content := d.add(stream)
		page := d.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pagesObj, font, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	d.set(pagesObj, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	if title != "" {
		d.trailer = fmt.Sprintf(" /Info %d 0 R", d.add("<< /Title "+title+" /Producer (quiver tests) >>"))
	}
	return d
}

// pdfFixtures are the files in testdata/pdf, built here so that each can be
// read and changed as source (TestPDFFixtures checks the files match).
func pdfFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	report := textPDF(t, pdfUTF16("Über Leuchttürme"), false,
		linesContent([]string{"Lighthouse keepers kept time", "with a noon mark (and a clock)."}),
		"", // a blank page
		linesContent([]string{"Page three: the rotating lens."}))
	flate := textPDF(t, pdfLiteral("Compressed report"), true,
		linesContent([]string{"First compressed page."}),
		linesContent([]string{"Second compressed page."}))
	flate.header = "%PDF-2.0"
	scanned := textPDF(t, pdfLiteral("Scanned letter"), false,
		"q 612 0 0 792 0 0 cm 0.9 g 0 0 1 1 re f Q", "0 0 100 100 re f")
	damaged := textPDF(t, "", false, linesContent([]string{"never read"})).bytes()
	damaged = bytes.Replace(damaged, []byte("xref\n0 "), []byte("xref\nzz "), 1)
	encrypted := textPDF(t, "", false, linesContent([]string{"secret"}))
	encrypted.trailer = fmt.Sprintf(" /Encrypt %d 0 R /ID [<%s> <%s>]",
		encrypted.add(fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /P -4 /O <%s> /U <%s> >>", strings.Repeat("AB", 32), strings.Repeat("CD", 32))),
		strings.Repeat("01", 16), strings.Repeat("01", 16))
	return map[string][]byte{
		"report.pdf":     report.bytes(),
		"compressed.pdf": flate.bytes(),
		"scanned.pdf":    scanned.bytes(),
		"damaged.pdf":    damaged,
		"encrypted.pdf":  encrypted.bytes(),
	}
}

// xrefStreamPDF is a PDF 1.5 file as current writers make them: the
// catalog and page tree sit in an object stream and the cross-reference is
// a stream, Flate-compressed with the PNG Up predictor. With nested set,
// the cross-reference places the object stream inside itself, which the
// format forbids and the parser follows without end.
func xrefStreamPDF(t testing.TB, line string, nested bool) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	offsets := map[int]int{}
	obj := func(n int, body string) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	catalog, pages := "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [4 0 R] /Count 1 >>"
	header := fmt.Sprintf("1 0 2 %d ", len(catalog)+1)
	objStm := flateStream(t, header+catalog+" "+pages)
	obj(3, strings.Replace(objStm, "<<", fmt.Sprintf("<< /Type /ObjStm /N 2 /First %d", len(header)), 1))
	obj(4, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 6 0 R >> >> /Contents 5 0 R >>")
	obj(5, pdfStream("", linesContent([]string{line})))
	obj(6, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	offsets[7] = b.Len()
	rows := [][3]int{{0, 0, 255}, {2, 3, 0}, {2, 3, 1}}
	if nested {
		rows = append(rows, [3]int{2, 3, 0})
	} else {
		rows = append(rows, [3]int{1, offsets[3], 0})
	}
	for n := 4; n <= 7; n++ {
		rows = append(rows, [3]int{1, offsets[n], 0})
	}
	var data, prev []byte
	prev = make([]byte, 4)
	for _, r := range rows {
		row := []byte{byte(r[0]), byte(r[1] >> 8), byte(r[1]), byte(r[2])}
		data = append(data, 2)
		for i := range row {
			data = append(data, row[i]-prev[i])
		}
		prev = row
	}
	xref := flateStream(t, string(data))
	obj(7, strings.Replace(xref, "<<", "<< /Type /XRef /Size 8 /W [1 2 1] /Root 1 0 R /DecodeParms << /Predictor 12 /Columns 4 >>", 1))
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", offsets[7])
	return b.Bytes()
}
