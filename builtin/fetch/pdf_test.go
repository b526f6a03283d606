package fetch

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/internal/golden"
	"github.com/quiverhq/quiver/tool"
)

// TestPDFFixtures checks that the files in testdata/pdf and the seeds in
// testdata/fuzz/FuzzPDFText are what pdfFixtures builds (rewrite them with
// -update).
func TestPDFFixtures(t *testing.T) {
	for name, b := range pdfFixtures(t) {
		golden.Check(t, "pdf/"+name, string(b))
		golden.Check(t, "fuzz/FuzzPDFText/"+strings.TrimSuffix(name, ".pdf"), "go test fuzz v1\n[]byte("+strconv.Quote(string(b))+")\n")
	}
	for name, b := range map[string][]byte{
		"objstm":        xrefStreamPDF(t, "object streams work", false),
		"objstm-nested": xrefStreamPDF(t, "never read", true),
		"hex-hang":      textPDF(t, "", false, "BT /F1 12 Tf 72 720 Td (fine) Tj <48").bytes(),
	} {
		golden.Check(t, "fuzz/FuzzPDFText/"+name, "go test fuzz v1\n[]byte("+strconv.Quote(string(b))+")\n")
	}
}

// TestFetchPDF reads PDFs through fetch_url from a loopback server.
func TestFetchPDF(t *testing.T) {
	srv, _ := serve(t, map[string]page{
		"/report.pdf":     {contentType: "application/pdf", body: mustRead(t, "pdf/report.pdf")},
		"/download":       {contentType: "application/octet-stream", body: mustRead(t, "pdf/report.pdf")},
		"/old-type":       {contentType: "application/x-pdf", body: mustRead(t, "pdf/compressed.pdf")},
		"/compressed.pdf": {contentType: "application/pdf", body: mustRead(t, "pdf/compressed.pdf")},
		"/scanned.pdf":    {contentType: "application/pdf", body: mustRead(t, "pdf/scanned.pdf")},
		"/damaged.pdf":    {contentType: "application/pdf", body: mustRead(t, "pdf/damaged.pdf")},
		"/encrypted.pdf":  {contentType: "application/pdf", body: mustRead(t, "pdf/encrypted.pdf")},
		"/objstm.pdf":     {contentType: "application/pdf", body: xrefStreamPDF(t, "Kept in an object stream.", false)},
	})
	tl := FetchTool(Config{Client: srv.Client()})
	report := "Title: Über Leuchttürme\nContent (text): characters 0–161 of 161\n\n" +
		"--- page 1 ---\nLighthouse keepers kept time\nwith a noon mark (and a clock).\n\n" +
		"--- page 2 ---\n[no text on this page]\n\n" +
		"--- page 3 ---\nPage three: the rotating lens."
	compressed := "Title: Compressed report\nContent (text): characters 0–77 of 77\n\n" +
		"--- page 1 ---\nFirst compressed page.\n\n--- page 2 ---\nSecond compressed page."
	tests := []struct {
		name, path string
		want       string // the answer after its URL line
		wantErr    string
	}{
		{name: "pages in order with the info title", path: "/report.pdf", want: report},
		{name: "sniffed behind octet-stream", path: "/download", want: report},
		{name: "old media type, pdf 2.0, flate", path: "/old-type", want: compressed},
		{name: "compressed pages", path: "/compressed.pdf", want: compressed},
		{name: "object and cross-reference streams", path: "/objstm.pdf", want: "Content (text): characters 0–40 of 40\n\n--- page 1 ---\nKept in an object stream."},
		{name: "scanned", path: "/scanned.pdf", wantErr: "this PDF has no extractable text (it may be scanned images)"},
		{name: "damaged", path: "/damaged.pdf", wantErr: "could not read this PDF: the file is damaged or uses features the reader does not support"},
		{name: "encrypted", path: "/encrypted.pdf", wantErr: "could not read this PDF: it is encrypted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, tl, tool.Scope{}, map[string]any{"url": srv.URL + tc.path})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := "URL: " + srv.URL + tc.path + "\n" + tc.want
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFetchPDFOverCap checks that a PDF longer than the byte cap is refused
// with the cap named, whether the server declares its length or not: a cut
// PDF cannot be parsed.
func TestFetchPDFOverCap(t *testing.T) {
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("Line %d of a long document.", i))
	}
	big := textPDF(t, "", false, linesContent(lines)).bytes()
	const limit = 2 << 10
	if len(big) <= limit {
		t.Fatalf("test PDF is %d bytes, want more than %d", len(big), limit)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		w.Write(big)
	})
	streamed := func(contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.Write(big[:100])
			w.(http.Flusher).Flush() // no Content-Length: the length shows only when read
			w.Write(big[100:])
		}
	}
	mux.HandleFunc("/streamed", streamed("application/pdf"))
	mux.HandleFunc("/streamed-octets", streamed("application/octet-stream"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tl := FetchTool(Config{Client: srv.Client(), MaxBodyBytes: limit})
	want := "this PDF is larger than the 2 KiB fetch_url reads, and a cut PDF cannot be parsed; look for an HTML or text version of the document"
	for _, path := range []string{"/declared", "/streamed", "/streamed-octets"} {
		t.Run(path, func(t *testing.T) {
			_, err := call(t, tl, tool.Scope{}, map[string]any{"url": srv.URL + path})
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %q", err, want)
			}
		})
	}
}

// TestPDFLimits checks the page and text caps and the notes that say what
// was left out, and that a long PDF pages through fetch_url from one fetch.
func TestPDFLimits(t *testing.T) {
	var pages []string
	for i := range maxPDFPages + 5 {
		pages = append(pages, linesContent([]string{fmt.Sprintf("Page %d.", i+1)}))
	}
	_, text, err := pdfText(textPDF(t, "", false, pages...).bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"--- page 300 ---\nPage 300.", "[fetch_url read the first 300 of the document's 305 pages.]"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text[max(0, len(text)-300):])
		}
	}
	if strings.Contains(text, "page 301") {
		t.Error("text holds page 301")
	}

	line := strings.Repeat("Long lines make a long document, ", 3)
	var lines []string
	for range 9000 {
		lines = append(lines, line)
	}
	long := textPDF(t, "", true, linesContent(lines), linesContent(lines), linesContent(lines)).bytes()
	_, text, err = pdfText(long)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(text); n > maxCachedChars || !utf8.ValidString(text) {
		t.Errorf("text of %d characters (valid UTF-8: %v), want at most %d", n, utf8.ValidString(text), maxCachedChars)
	}
	if !strings.HasSuffix(text, "[The text stops part-way through page 2 of 3: fetch_url keeps at most 1 MiB of a PDF's text.]") {
		t.Errorf("text ends %q", text[max(0, len(text)-200):])
	}

	srv, hits := serve(t, map[string]page{"/long.pdf": {contentType: "application/pdf", body: long}})
	tl := FetchTool(Config{Client: srv.Client()})
	s := tool.Scope{ConversationID: "pdf"}
	m := MaxMaxLength
	for start, want := range map[int]string{0: fmt.Sprintf("[More: call fetch_url again with start_index=%d to read on.]", m), m: fmt.Sprintf("start_index=%d", 2*m)} {
		got, err := call(t, tl, s, map[string]any{"url": srv.URL + "/long.pdf", "max_length": m, "start_index": start})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, want) {
			t.Errorf("answer from %d lacks %q", start, want)
		}
	}
	if n := hits.get("/long.pdf"); n != 1 {
		t.Errorf("server was asked %d times while paging, want 1 (cached)", n)
	}
}

// TestPDFLayout checks how the drawing of text becomes lines and words.
// Helvetica here has no /Widths, so a glyph is taken as half an em wide.
func TestPDFLayout(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"kerning is not a space; a word gap is", "BT /F1 10 Tf 72 700 Td [(W)80(ord)-333(next)] TJ ET", "Word next"},
		{"a jump along the line is a space", "BT /F1 10 Tf 72 700 Td (Hello) Tj 40 0 Td (world) Tj ET", "Hello world"},
		{"a superscript stays on its line", "BT /F1 10 Tf 72 700 Td (E=mc) Tj 20 3 Td (2) Tj ET", "E=mc2"},
		{"a line feed, then a paragraph gap", "BT /F1 10 Tf 72 700 Td (one) Tj 0 -12 Td (two) Tj 0 -40 Td (three) Tj ET", "one\ntwo\n\nthree"},
		{"font size from the text matrix", "BT /F1 1 Tf 12 0 0 12 72 700 Tm (Hello) Tj 12 0 0 12 72 686 Tm (next) Tj ET", "Hello\nnext"},
		{"scaled by cm inside q and Q", "q 2 0 0 2 0 0 cm BT /F1 6 Tf 36 350 Td (big) Tj ET Q BT /F1 12 Tf 72 686 Td (small) Tj ET", "big\nsmall"},
		{"T* and ' move down by the leading", "BT /F1 10 Tf 14 TL 72 700 Td (a) Tj T* (b) Tj (c) ' ET", "a\nb\nc"},
		{"spaces squeezed, lines trimmed", "BT /F1 10 Tf 72 700 Td (  spaced    out  ) Tj ET", "spaced out"},
		{"control bytes dropped, no font read raw", "BT 72 700 Td (\\001ok\\377) Tj ET", "ok\uFFFD"},
		{"unknown operators and bad operands ignored", "BT /F1 10 Tf 72 700 Td 1 2 3 zz (fine) Tj Tf cm ET", "fine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, text, err := pdfText(textPDF(t, "", false, tc.content).bytes())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("--- page 1 ---\n"+tc.want, text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPDFHostile feeds files made to hang, exhaust or crash the parser;
// each must end, with its error. A stack overflow or an allocation sized
// by the file would end the test binary rather than fail the test.
func TestPDFHostile(t *testing.T) {
	plain := textPDF(t, "", false, linesContent([]string{"x"}))
	cyclic := textPDF(t, "", false, linesContent([]string{"only once"}))
	cyclic.set(2, "<< /Type /Pages /Kids [2 0 R 5 0 R 2 0 R] /Count 3 >>")
	prevLoop := plain.bytes()
	prevLoop = bytes.Replace(prevLoop, []byte("/Root 1 0 R"), fmt.Appendf(nil, "/Root 1 0 R /Prev %d", bytes.LastIndex(prevLoop, []byte("\nxref\n"))+1), 1)
	hugeTable := bytes.Replace(plain.bytes(), []byte("xref\n0 "), []byte("xref\n1900000000 1\n0000000000 65535 f \n0 "), 1)
	wide := textPDF(t, "", false, "")
	wide.set(4, "<< /Length 0 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 40000000000 >> >>\nstream\n\nendstream")
	tests := []struct {
		name     string
		body     []byte
		readCap  int64 // raw-read budget; zero means the default
		want     string
		wantText string
	}{
		{name: "page tree with a cycle", body: cyclic.bytes(), wantText: "--- page 1 ---\nonly once\n\n[fetch_url read the first 1 of the document's 3 pages.]"},
		{name: "Prev chain in a circle", body: prevLoop, readCap: 1 << 20, want: pdfTooComplex},
		{name: "table claiming two billion objects", body: hugeTable, want: pdfUnreadable},
		{name: "object stream inside itself", body: xrefStreamPDF(t, "never read", true), want: pdfUnreadable},
		{name: "predictor row of 40 GB", body: wide.bytes(), want: pdfUnreadable},
		{name: "content ends in a hex string", body: textPDF(t, "", false, "BT /F1 12 Tf 72 720 Td (fine) Tj <48").bytes(), want: pdfUnreadable},
		{name: "no pages", body: textPDF(t, "", false).bytes(), want: pdfUnreadable},
		{name: "not a pdf", body: []byte("%PDF-1.7\n"), want: pdfUnreadable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := newPDFSource(tc.body)
			if tc.readCap > 0 {
				src.left = tc.readCap
			}
			_, text, err := src.text()
			if got := errString(err); got != tc.want || text != tc.wantText {
				t.Errorf("got text %q, error %q; want %q, %q", text, got, tc.wantText, tc.want)
			}
		})
	}
}

// TestLexCheck checks the hang detector against streams the parser reads
// to the end (the test finishing shows it does) and streams it would loop
// on.
func TestLexCheck(t *testing.T) {
	tests := []struct {
		stream string
		hangs  bool
	}{
		{"BT (abc) Tj ET", false},
		{"<48656c6c6f> Tj", false},
		{"<< /A 1 >> (x) Tj", false},
		{"(a < b) Tj", false},
		{"% a comment with <\n(x) Tj", false},
		{"(nested (parens < ) and \\) escapes) Tj", false},
		{"/a#41<42> Tj", false},
		{"<zz> (fine) Tj", false},
		{"<4865", true},
		{"(x) Tj <", true},
		{"<4 ", true},
		{"[(a\\q <", true},          // a bad escape ends the string; the '<' is plain text
		{"[(a\\400 <", true},        // so does an octal escape over 255
		{"/a#zz<", true},            // a bad name escape ends the name after two bytes
		{"/a#(<42> Tj", false},      // the escape swallows "(<"; "42>" is a keyword and a '>'
		{"<zz> <", true},            // a bad pair ends the hex string; reading goes on
		{"(\\061\\062<) Tj", false}, // octal escapes inside a string
	}
	for _, tc := range tests {
		t.Run(tc.stream, func(t *testing.T) {
			var l lexCheck
			l.Write([]byte(tc.stream))
			if l.hangs() != tc.hangs {
				t.Errorf("hangs() = %v, want %v", l.hangs(), tc.hangs)
			}
			if tc.hangs {
				return
			}
			// The parser must read this stream to its end.
			pdfText(textPDF(t, "", false, tc.stream).bytes())
		})
	}
}
