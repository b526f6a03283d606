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
		"/garbage.pdf":    {contentType: "application/pdf", body: []byte("%PDF-1.7\nnot a PDF at all\n")},
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
		{name: "damaged cross-reference table, repaired", path: "/damaged.pdf", want: "Content (text): characters 0–25 of 25\n\n--- page 1 ---\nnever read"},
		{name: "not a PDF past its header", path: "/garbage.pdf", wantErr: "could not read this PDF: the file is damaged or uses features the reader does not support"},
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
	_, text, err := ReadPDF(textPDF(t, "", false, pages...).bytes())
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
	_, text, err = ReadPDF(long)
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

// TestPDFHostile feeds files made to hang, exhaust or crash a parser; each
// must end, with its error or with what PDFium repairs of it. A stack
// overflow or an allocation sized by the file would end the test binary
// rather than fail the test.
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
		want     string
		wantText string
	}{
		{name: "page tree with a cycle", body: cyclic.bytes(), wantText: "--- page 1 ---\nonly once\n\n--- page 2 ---\n[this page could not be read]\n\n--- page 3 ---\n[this page could not be read]"},
		{name: "Prev chain in a circle", body: prevLoop, wantText: "--- page 1 ---\nx"},
		{name: "table claiming two billion objects", body: hugeTable, wantText: "--- page 1 ---\nx"},
		{name: "object stream inside itself", body: xrefStreamPDF(t, "never read", true), wantText: "--- page 1 ---\nnever read"},
		{name: "predictor row of 40 GB", body: wide.bytes(), want: pdfNoText},
		{name: "content ends in a hex string", body: textPDF(t, "", false, "BT /F1 12 Tf 72 720 Td (fine) Tj <48").bytes(), wantText: "--- page 1 ---\nfine"},
		{name: "no pages", body: textPDF(t, "", false).bytes(), want: pdfUnreadable},
		{name: "not a pdf", body: []byte("%PDF-1.7\n"), want: pdfUnreadable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, text, err := ReadPDF(tc.body)
			if got := errString(err); got != tc.want || text != tc.wantText {
				t.Errorf("got text %q, error %q; want %q, %q", text, got, tc.wantText, tc.want)
			}
		})
	}
}

func excerptOf(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}
