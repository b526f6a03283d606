package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script writes an executable shell script standing in for the PDF child.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reader")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPDFReaderChild(t *testing.T) {
	exe, err := os.Executable() // the test binary; TestMain runs __read-pdf
	if err != nil {
		t.Fatal(err)
	}
	read := pdfReader(exe)
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

func TestPDFReaderChildFailures(t *testing.T) {
	cases := []struct{ name, body string }{
		{"crash", "cat >/dev/null; kill -SEGV $$"},
		{"killed", "cat >/dev/null; kill -9 $$"},
		{"garbage", "cat >/dev/null; echo 'not json'"},
		{"flood", "cat >/dev/null; yes '{}' | head -c 8000000"},
		{"exit", "cat >/dev/null; exit 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := pdfReader(script(t, c.body))(context.Background(), []byte("%PDF-1.7\n"))
			if !errors.Is(err, errPDFProcess) {
				t.Fatalf("got %v, want the reader-stopped error", err)
			}
		})
	}
	t.Run("hang", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _, err := pdfReader(script(t, "exec sleep 600"))(ctx, []byte("%PDF-1.7\n"))
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
