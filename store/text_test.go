package store_test

import (
	"testing"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"tab\tand\nline":   "tab\tand\nline",
		"nul\x00byte":      "nul byte",
		"bad\xffutf8":      "bad\uFFFDutf8",
		"bell\x07 del\x7f": "bell  del ",
		"tiếng Việt":       "tiếng Việt",
	} {
		if got := store.PlainText(in); got != want {
			t.Errorf("PlainText(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzPlainText(f *testing.F) {
	f.Add("a\x00b\xff")
	f.Fuzz(func(t *testing.T, s string) {
		got := store.PlainText(s)
		if !utf8.ValidString(got) {
			t.Fatalf("PlainText(%q) = %q, not valid UTF-8", s, got)
		}
		for _, r := range got {
			if r == 0 {
				t.Fatalf("PlainText(%q) = %q holds a NUL", s, got)
			}
		}
		if store.PlainText(got) != got {
			t.Fatalf("PlainText is not idempotent on %q", s)
		}
	})
}
