package document

import (
	"context"
	"errors"
	"strings"
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

// FuzzJoinChunks: the chunks of any text join into a text holding every
// chunk whole, never longer than the chunks laid end to end with a line
// break between each two.
func FuzzJoinChunks(f *testing.F) {
	f.Add("short text")
	f.Add(strings.Repeat("Sentence of a paragraph says something. ", 120))
	f.Add(strings.Repeat("東京は日本の首都です。", 300))
	f.Add(strings.Repeat("ab", 2000))
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 64<<10 || !utf8.ValidString(text) {
			t.Skip()
		}
		chunks := Chunks(text)
		texts := make([]string, len(chunks))
		total := 0
		for i, c := range chunks {
			texts[i] = c.Text
			total += len(c.Text) + 1
		}
		joined := JoinChunks(texts)
		for i, c := range texts {
			if !strings.Contains(joined, c) {
				t.Fatalf("chunk %d is not in the joined text", i)
			}
		}
		if len(joined) > total {
			t.Fatalf("joined %d bytes from chunks of %d", len(joined), total)
		}
	})
}
