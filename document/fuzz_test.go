package document

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzDOCX: any archive gives valid, bounded text or one of the
// package's errors, and never panics.
func FuzzDOCX(f *testing.F) {
	f.Add(makeDOCX(f, [2]string{docxBody, docxXML(para("hello") + table([]string{"a", "b"}))}))
	f.Add(makeDOCX(f, [2]string{docxBody, "<w:tbl><w:tc><w:tc><w:tr></w:p>"}))
	f.Add(makeDOCX(f, [2]string{docxBody, "<w:t>&bogus;</w:t"}))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Extractor{}.Extract(context.Background(), "f.docx", "", data)
		if err != nil {
			if !errors.Is(err, ErrBinary) && !errors.Is(err, ErrUnreadable) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !utf8.ValidString(d.Text) || len(d.Text) > MaxTextBytes {
			t.Fatalf("text invalid or over the cap: %d bytes", len(d.Text))
		}
	})
}
