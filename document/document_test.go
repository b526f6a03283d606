package document

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// docxXML wraps body (WordprocessingML elements) in a document part.
func docxXML(body string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
		`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		body + `</w:body></w:document>`
}

// makeDOCX builds an archive of the named parts, in order.
func makeDOCX(t testing.TB, parts ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.Create(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func para(runs ...string) string {
	var b strings.Builder
	b.WriteString("<w:p>")
	for _, r := range runs {
		fmt.Fprintf(&b, `<w:r><w:t xml:space="preserve">%s</w:t></w:r>`, r)
	}
	b.WriteString("</w:p>")
	return b.String()
}

func table(rows ...[]string) string {
	var b strings.Builder
	b.WriteString("<w:tbl>")
	for _, r := range rows {
		b.WriteString("<w:tr>")
		for _, c := range r {
			b.WriteString("<w:tc>" + para(c) + "</w:tc>")
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return b.String()
}

func TestExtract(t *testing.T) {
	generated := makeDOCX(t,
		[2]string{"[Content_Types].xml", "<Types/>"},
		[2]string{"word/document.xml", docxXML(
			para("Báo cáo ", "quý ba") +
				`<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r></w:p>` +
				`<w:p><w:del><w:r><w:delText>deleted</w:delText></w:r></w:del><w:r><w:instrText>PAGE</w:instrText><w:t>kept &amp; escaped</w:t></w:r></w:p>` +
				table([]string{"Name", "Count"}, []string{"Tết", "3"}) +
				para("Конец"))})
	pdfReader := func(_ context.Context, body []byte) (string, string, error) {
		return "The title", "--- page 1 ---\r\nhello pdf", nil
	}
	cases := []struct {
		name, mediaType string
		data            []byte
		want            Document
		wantErr         error
	}{
		{name: "main.go", data: []byte("package main\r\n\nfunc main() {}\n"), want: Document{Kind: Text, Text: "package main\n\nfunc main() {}\n"}},
		{name: "data.json", mediaType: "application/json", data: []byte("\xEF\xBB\xBF{\"a\": \"ü\"}"), want: Document{Kind: Text, Text: `{"a": "ü"}`}},
		{name: "utf16.txt", data: []byte{0xFF, 0xFE, 'h', 0, 'i', 0}, want: Document{Kind: Text, Text: "hi"}},
		{name: "notes.yaml", data: []byte("a: 1\nb: [x, y]\n"), want: Document{Kind: Text, Text: "a: 1\nb: [x, y]\n"}},
		// The extension claims text, the bytes are not: bytes win.
		{name: "photo.txt", data: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), wantErr: ErrBinary},
		{name: "latin1.txt", data: []byte("caf\xe9"), wantErr: ErrBinary},
		{name: "report.docx", data: generated, want: Document{Kind: DOCX, Text: "Báo cáo quý ba\na\tb\nc\nkept & escaped\nName | Count\nTết | 3\nКонец"}},
		// The extension claims DOCX, the bytes are text.
		{name: "fake.docx", data: []byte("just text"), want: Document{Kind: Text, Text: "just text"}},
		{name: "archive.zip", data: makeDOCX(t, [2]string{"a.txt", "x"}), wantErr: ErrBinary},
		{name: "broken.docx", data: []byte("PK\x03\x04garbage"), wantErr: ErrUnreadable},
		{name: "a.pdf", data: []byte("%PDF-1.7\n1 0 obj\n"), want: Document{Kind: PDF, Title: "The title", Text: "--- page 1 ---\nhello pdf"}},
		{name: "locked.pdf", data: []byte("%PDF-1.7\ntrailer << /Root 1 0 R /Encrypt 5 0 R >>"), wantErr: ErrEncrypted},
	}
	x := Extractor{ReadPDF: pdfReader}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := x.Extract(context.Background(), c.name, c.mediaType, c.data)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, c.name) {
					t.Errorf("message %q is not one line naming the file", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestExtractPDFFailures(t *testing.T) {
	pdf := []byte("%PDF-1.7\n")
	if _, err := (Extractor{}).Extract(context.Background(), "a.pdf", "", pdf); !errors.Is(err, ErrUnreadable) {
		t.Errorf("no reader: err = %v, want ErrUnreadable", err)
	}
	called := false
	locked := Extractor{ReadPDF: func(context.Context, []byte) (string, string, error) {
		called = true
		return "", "", errors.New("could not read this PDF: it is encrypted")
	}}
	if _, err := locked.Extract(context.Background(), "a.pdf", "", pdf); !errors.Is(err, ErrEncrypted) || !called {
		t.Errorf("reader says encrypted: err = %v, want ErrEncrypted", err)
	}
	damaged := Extractor{ReadPDF: func(context.Context, []byte) (string, string, error) {
		return "", "", errors.New("could not read this PDF: damaged\nsecond line")
	}}
	_, err := damaged.Extract(context.Background(), "a.pdf", "", pdf)
	if !errors.Is(err, ErrUnreadable) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged: err = %v, want one line with the reader's reason", err)
	}
}

func TestExtractBounds(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxInputBytes+1)
	if _, err := (Extractor{}).Extract(context.Background(), "big.txt", "", big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("input over the cap: err = %v, want ErrTooLarge", err)
	}
	long := strings.Repeat("é", MaxTextBytes) // twice MaxTextBytes in bytes
	d, err := (Extractor{}).Extract(context.Background(), "long.txt", "", []byte(long))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || len(d.Text) > MaxTextBytes || !utf8.ValidString(d.Text) {
		t.Errorf("text over the cap: %d bytes, truncated %v", len(d.Text), d.Truncated)
	}
}

// TestDOCXBomb: a part that inflates past the bound is refused, whatever
// size the archive declares; so is an archive of too many entries.
func TestDOCXBomb(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(docxBody)
	w.Write([]byte(docxXML("<w:p><w:r><w:t>")))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range MaxDOCXPartBytes>>20 + 1 {
		w.Write(chunk)
	}
	zw.Close()
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes; it should compress", buf.Len())
	}
	data := buf.Bytes()
	if _, err := (Extractor{}).Extract(context.Background(), "bomb.docx", "", data); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bomb: err = %v, want ErrTooLarge", err)
	}
	// Lie about the size in the headers: the archive reader stops at the
	// declared size, so the lie reads as damage, never as a success.
	zr, _ := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	declared := uint32(zr.File[0].UncompressedSize64)
	lying := bytes.ReplaceAll(data, le32(declared), le32(100))
	_, err := (Extractor{}).Extract(context.Background(), "bomb.docx", "", lying)
	if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrUnreadable) {
		t.Errorf("lying bomb: err = %v, want ErrTooLarge or ErrUnreadable", err)
	}

	var many [][2]string
	for i := range MaxDOCXEntries + 1 {
		many = append(many, [2]string{fmt.Sprintf("f%d", i), ""})
	}
	many = append(many, [2]string{docxBody, docxXML(para("x"))})
	if _, err := (Extractor{}).Extract(context.Background(), "many.docx", "", makeDOCX(t, many...)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("many entries: err = %v, want ErrTooLarge", err)
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// TestPandocDOCX reads a DOCX that a real writer made from known text.
func TestPandocDOCX(t *testing.T) {
	pandoc, err := exec.LookPath("pandoc")
	if err != nil {
		t.Skip("pandoc is not installed (scripts/test installs it)")
	}
	dir := t.TempDir()
	src := "# Tiêu đề\n\nĐoạn văn đầu tiên có dấu.\n\nSecond paragraph, with *emphasis* and `code`.\n\n| Left | Right |\n|------|-------|\n| 一 | 二 |\n| α | β |\n\nЗаключение.\n"
	md := filepath.Join(dir, "in.md")
	out := filepath.Join(dir, "out.docx")
	if err := os.WriteFile(md, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(pandoc, md, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("pandoc: %v: %s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := (Extractor{}).Extract(context.Background(), "out.docx", "", data)
	if err != nil {
		t.Fatal(err)
	}
	want := "Tiêu đề\nĐoạn văn đầu tiên có dấu.\nSecond paragraph, with emphasis and code.\nLeft | Right\n一 | 二\nα | β\nЗаключение."
	if diff := cmp.Diff(want, d.Text); diff != "" || d.Kind != DOCX {
		t.Errorf("kind %s (-want +got)\n%s", d.Kind, diff)
	}
}
