package fetch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/tool"
)

// unmappedPDF is a document whose first page shows text in a composite
// font that says nothing of its characters (Identity-H codes, no
// ToUnicode map, no embedded font to read tables from), and whose other
// pages, if any, are plain text.
func unmappedPDF(t testing.TB, more ...string) []byte {
	t.Helper()
	var codes strings.Builder
	for i := range 60 {
		fmt.Fprintf(&codes, "%04X", 0x0E00+i*37)
	}
	contents := append([]string{"BT /F2 12 Tf 72 700 Td <" + codes.String() + "> Tj ET"}, more...)
	d := textPDF(t, "", false, contents...)
	cid := d.add("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /NotoSansCJKjp-Regular /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor << /Type /FontDescriptor /FontName /NotoSansCJKjp-Regular /Flags 4 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >> /DW 1000 >>")
	f2 := d.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /NotoSansCJKjp-Regular /Encoding /Identity-H /DescendantFonts [%d 0 R] >>", cid))
	for i, o := range d.objects {
		if strings.HasPrefix(o, "<< /Type /Page ") {
			d.set(i+1, strings.Replace(o, "/Font << /F1 3 0 R >>", fmt.Sprintf("/Font << /F1 3 0 R /F2 %d 0 R >>", f2), 1))
		}
	}
	return d.bytes()
}

// TestPDFUnmappedFont: a page whose font does not say which characters
// it shows is reported as unreadable; a document of only such pages is
// refused, and fetch_url does not label a document with such pages as text.
func TestPDFUnmappedFont(t *testing.T) {
	_, _, err := ReadPDF(unmappedPDF(t))
	if got := errString(err); got != pdfUnreadableText {
		t.Errorf("only unmapped text: error %q, want %q", got, pdfUnreadableText)
	}
	_, text, err := ReadPDF(unmappedPDF(t, linesContent([]string{"Plain text."})))
	want := "--- page 1 ---\n[page 1 could not be read as text: its fonts do not say which characters they show]\n\n--- page 2 ---\nPlain text."
	if err != nil || text != want {
		t.Errorf("mixed document: %q, %v; want %q", text, err, want)
	}
	srv, _ := serve(t, map[string]page{"/mixed.pdf": {contentType: "application/pdf", body: unmappedPDF(t, linesContent([]string{"Plain text."}))}})
	got, err := call(t, FetchTool(Config{Client: srv.Client()}), tool.Scope{}, map[string]any{"url": srv.URL + "/mixed.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Content (text, 1 of 2 pages unreadable):") {
		t.Errorf("label of a document with an unreadable page:\n%s", got)
	}
}

func TestPageReadable(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"English", "The keepers kept a log of every night on duty.", true},
		{"Japanese with a Latin word", "図書館はPDFの資料を午前九時から貸し出します。", true},
		{"Vietnamese", "Thư viện mở cửa từ tám giờ sáng đến chín giờ tối.", true},
		{"a few icons on a page of text", "\ue001 Home \ue002 Search: the keepers kept a log of every night.", true},
		{"replacement characters", "\ufffd\ufffd\ufffd\ufffd\ufffd ab", false},
		{"private use", "\ue000\ue001\ue002\ue003\ue004\ue005", false},
		{"control characters", "\x01\x02\x03\x04\x05\x06abc", false},
		{"letters hopping between scripts", "ลດ༃ဆფᄉሌᎣᐒ ลດ༃ဆფᄉሌᎣᐒ", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pageReadable(tc.text, 0); got != tc.want {
				t.Errorf("pageReadable(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

// TestPDFReaderBounds: a document that needs more memory than the reader
// allows fails as too complex, and a read whose context has ended returns
// the context's error; the reader still reads the next document.
func TestPDFReaderBounds(t *testing.T) {
	corpus := loadCorpus(t)
	small := &PDFReader{maxMemory: 24 << 20}
	big := textPDF(t, "", true, "BT /F1 12 Tf 72 700 Td "+strings.Repeat("(x) Tj ", 6<<20)+"ET").bytes()
	if _, _, err := small.Read(context.Background(), big); errString(err) != pdfTooComplex {
		t.Errorf("over the memory bound: error %q (%v), want %q", errString(err), errors.Unwrap(err), pdfTooComplex)
	}
	if _, text, err := small.Read(context.Background(), corpus["english"]); err != nil || !strings.Contains(text, "Keeping a Lighthouse") {
		t.Errorf("after a failed read: %q, %v", excerptOf(text), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ReadPDF(corpus["english"]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := DefaultPDFReader()(ctx, corpus["english"]); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: error %v, want context.Canceled", err)
	}
}

// TestPDFReadStoppedMidwayIsNoResult: a read stopped while it goes
// (cancelled at points spread over the time a whole read takes) either
// finished first, with every page, or fails with the caller's error:
// never a text whose later pages read as unreadable, which fetch_url
// would cache as the whole document.
func TestPDFReadStoppedMidwayIsNoResult(t *testing.T) {
	const pages = 120
	contents := make([]string, pages)
	for i := range contents {
		contents[i] = fmt.Sprintf("BT /F1 12 Tf 72 700 Td (Page %d of the long report.) Tj ET", i+1)
	}
	body := textPDF(t, "", true, contents...).bytes()
	read := DefaultPDFReader()
	start := time.Now()
	if _, text, err := read(context.Background(), body); err != nil || !strings.Contains(text, fmt.Sprintf("Page %d of", pages)) {
		t.Fatalf("whole read: %v, %q", err, excerptOf(text))
	}
	whole := time.Since(start)
	for i := 1; i <= 12; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(whole*time.Duration(i)/12, cancel)
		_, text, err := read(ctx, body)
		timer.Stop()
		cancel()
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			t.Errorf("stop %d/12: error %v, want context.Canceled", i, err)
		case err == nil && (!strings.Contains(text, fmt.Sprintf("Page %d of", pages)) || strings.Contains(text, "could not be read")):
			t.Errorf("stop %d/12: a read cut short returned a result: %q", i, excerptOf(text))
		}
	}
}
