package app

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/builtin/fetch"
)

// TestPDFReaderChild: the hidden __read-pdf command is the PDF child
// fetch_url's reader runs: through the quiver executable (the test
// binary, whose TestMain runs app.Main), a PDF gives its title and text
// and a damaged one the reader's own message. The reader's failure modes
// are tested in builtin/fetch.
func TestPDFReaderChild(t *testing.T) {
	exe, err := os.Executable() // the test binary; TestMain runs __read-pdf
	if err != nil {
		t.Fatal(err)
	}
	read := fetch.ChildPDFReader(exe)
	body, err := os.ReadFile("../../builtin/fetch/testdata/pdf/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	title, text, err := read(context.Background(), body)
	if err != nil || !strings.Contains(text, "--- page 1 ---") || title == "" {
		t.Fatalf("report.pdf through the child: %q %q %v", title, excerptOf(text), err)
	}
	damaged, err := os.ReadFile("../../builtin/fetch/testdata/pdf/damaged.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := read(context.Background(), damaged); err == nil || !strings.Contains(err.Error(), "PDF") {
		t.Fatalf("damaged.pdf: %v, want the reader's own message", err)
	}
}

func excerptOf(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}
