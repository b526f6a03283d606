package fetch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the executable that runs the
// PDF child ("exe __read-pdf"), as production runs its own.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == PDFCommand {
		if err := ServePDFChild(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// script writes an executable shell script standing in for the PDF child.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reader")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChildPDFReader: a PDF read through the child gives its title and
// text; a damaged one the reader's own message.
func TestChildPDFReader(t *testing.T) {
	exe, err := os.Executable() // the test binary; TestMain serves PDFCommand
	if err != nil {
		t.Fatal(err)
	}
	read := ChildPDFReader(exe)
	body, err := os.ReadFile("testdata/pdf/report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	title, text, err := read(context.Background(), body)
	if err != nil || !strings.Contains(text, "--- page 1 ---") || title == "" {
		t.Fatalf("report.pdf through the child: %q %q %v", title, excerptOf(text), err)
	}
	damaged, err := os.ReadFile("testdata/pdf/damaged.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := read(context.Background(), damaged); err == nil || !strings.Contains(err.Error(), "PDF") || errors.Is(err, errPDFProcess) {
		t.Fatalf("damaged.pdf: %v, want the reader's own message", err)
	}
}

func TestChildPDFReaderFailures(t *testing.T) {
	cases := []struct{ name, body string }{
		{"crash", "cat >/dev/null; kill -SEGV $$"},
		{"killed", "cat >/dev/null; kill -9 $$"},
		{"garbage", "cat >/dev/null; echo 'not json'"},
		{"flood", "cat >/dev/null; yes '{}' | head -c 8000000"},
		{"exit", "cat >/dev/null; exit 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ChildPDFReader(script(t, c.body))(context.Background(), []byte("%PDF-1.7\n"))
			if !errors.Is(err, errPDFProcess) {
				t.Fatalf("got %v, want the reader-stopped error", err)
			}
		})
	}
	t.Run("hang", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _, err := ChildPDFReader(script(t, "exec sleep 600"))(ctx, []byte("%PDF-1.7\n"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the call's deadline", err)
		}
	})
}

func excerptOf(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}
