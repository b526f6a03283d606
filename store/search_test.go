package store_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

func TestCleanTitle(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"Plain", "Budget for Q3", "Budget for Q3"},
		{"Trimmed", "  \t Budget \n", "Budget"},
		{"Controls", "a\x00b\x07c\x1bd\x7fe\u0085f", "a b c d e f"},
		{"Newlines", "first line\r\nsecond", "first line second"},
		{"Bidi", "invoice\u202Efdp.exe\u2066x\u2069", "invoice fdp.exe x"},
		{"Spaces", "a   b\u00a0\u00a0c", "a b c"},
		{"InvalidUTF8", "bad \xff byte", "bad \uFFFD byte"},
		{"Vietnamese", "Chuyến đi Đà Nẵng", "Chuyến đi Đà Nẵng"},
		{"Empty", " \x00 \n", ""},
		{"Cut", strings.Repeat("ắ", store.MaxTitleRunes) + "tail", strings.Repeat("ắ", store.MaxTitleRunes)},
		{"CutNoTrailingSpace", strings.Repeat("a", store.MaxTitleRunes-1) + " b", strings.Repeat("a", store.MaxTitleRunes-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := store.CleanTitle(tc.in); got != tc.want {
				t.Errorf("CleanTitle(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTitleControl(t *testing.T) {
	for in, want := range map[string]bool{
		"Budget for Q3": false, "tab\there": true, "nul\x00": true, "bidi\u202E": true,
		"line\nbreak": true, "Đà Nẵng": false, "c1\u0085": true,
	} {
		if got := store.TitleControl(in); got != want {
			t.Errorf("TitleControl(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestFoldText(t *testing.T) {
	for in, want := range map[string]string{
		"ĐÀ NẴNG":            "đà nẵng",
		"Hue\u0302\u0301":    "huế", // decomposed, composed by NFC
		"MÜNCHEN Straße":     "münchen straße",
		"nul\x00here":        "nul here",
		"already lower case": "already lower case",
	} {
		if got := store.FoldText(in); got != want {
			t.Errorf("FoldText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLikeContains(t *testing.T) {
	for in, want := range map[string]string{
		"plain":  "%plain%",
		"50%":    `%50\%%`,
		"my_n":   `%my\_n%`,
		`C:\tmp`: `%C:\\tmp%`,
	} {
		if got := store.LikeContains(in); got != want {
			t.Errorf("LikeContains(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCleanTitle: whatever comes in, a clean title is valid UTF-8, holds
// no character CleanTitle takes out, has at most MaxTitleRunes runes, is
// trimmed, and cleaning it again changes nothing.
func FuzzCleanTitle(f *testing.F) {
	for _, s := range []string{"", "Budget", " a\x00b\n", "\u202Eexe", strings.Repeat("ắ ", 150), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := store.CleanTitle(in)
		switch {
		case !utf8.ValidString(got):
			t.Fatalf("CleanTitle(%q) = %q: not UTF-8", in, got)
		case strings.ContainsFunc(got, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) || store.TitleControl(got):
			t.Fatalf("CleanTitle(%q) = %q: holds a control or a space other than ' '", in, got)
		case utf8.RuneCountInString(got) > store.MaxTitleRunes:
			t.Fatalf("CleanTitle(%q) has %d runes", in, utf8.RuneCountInString(got))
		case strings.TrimSpace(got) != got:
			t.Fatalf("CleanTitle(%q) = %q: not trimmed", in, got)
		case store.CleanTitle(got) != got:
			t.Fatalf("CleanTitle is not idempotent on %q", got)
		}
	})
}
