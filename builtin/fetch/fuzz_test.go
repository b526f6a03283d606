package fetch

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHTMLToMarkdown feeds arbitrary bytes through the HTML path (charset
// detection, readability, whole-body fallback, Markdown conversion) and
// checks that it never panics and always yields valid UTF-8, with a title
// on one line. Seeds are in testdata/fuzz/FuzzHTMLToMarkdown.
func FuzzHTMLToMarkdown(f *testing.F) {
	fe := newFetcher(Config{Client: http.DefaultClient})
	u, _ := url.Parse("https://example.com/a/b.html")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		title, md := fe.htmlToMarkdown(body, contentType, u)
		if !utf8.ValidString(title) || !utf8.ValidString(md) {
			t.Fatalf("invalid UTF-8: title %q, markdown %q", title, md)
		}
		if strings.ContainsAny(title, "\n\r") {
			t.Fatalf("title %q spans lines", title)
		}
		if md != strings.TrimSpace(md) {
			t.Fatalf("markdown %q has surrounding space", md)
		}
	})
}

// FuzzPDFText feeds arbitrary bytes to the PDF reader and checks that it
// never panics out, always yields valid UTF-8 with a one-line title, and
// fails only with one of its own messages, which never quote the file.
// Seeds are in testdata/fuzz/FuzzPDFText, written from pdfFixtures.
func FuzzPDFText(f *testing.F) {
	// Compile the PDF engine once before the inputs: under the fuzzer's
	// coverage instrumentation the first read takes longer than the 10 s
	// the fuzzer gives one input, and the worker would be taken for hung.
	_, _, _ = ReadPDF([]byte("%PDF-1.4\n%%EOF\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		title, text, err := ReadPDF(body)
		if !utf8.ValidString(title) || !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8: title %q, text %q", title, text)
		}
		if strings.ContainsAny(title, "\n\r") {
			t.Fatalf("title %q spans lines", title)
		}
		if err != nil {
			if !slices.Contains([]string{pdfUnreadable, pdfEncrypted, pdfTooComplex, pdfNoText, pdfUnreadableText}, err.Error()) {
				t.Fatalf("error %q is not one of ReadPDF's messages", err)
			}
			return
		}
		if strings.TrimSpace(text) == "" || len(text) > maxPDFText+200 {
			t.Fatalf("text of %d bytes: %.200q", len(text), text)
		}
	})
}
