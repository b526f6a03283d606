package fetch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Agreement of a reader's text with the source text, from 0 to 1: one
// minus the edit distance (in characters) between the two normalised
// texts, divided by the longer one's length. Normalisation makes equal
// what a reader may legitimately write differently: NFKC (ligatures,
// precomposed or combining accents, full-width forms), the reader's page
// markers dropped, every run of white space one space, and no space next
// to a Han, kana or Hangul character (those scripts have none; a line
// break inside a Japanese sentence is not a word boundary).

// minAgreement is what every script must reach.
const minAgreement = 0.95

var pageMarker = regexp.MustCompile(`(?m)^--- page \d+ ---$`)

// normalizeText is s normalised for comparison.
func normalizeText(s string) []rune {
	s = pageMarker.ReplaceAllString(s, " ")
	s = norm.NFKC.String(s)
	var out []rune
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space && !spaceless(r) && !spaceless(out[len(out)-1]) {
			out = append(out, ' ')
		}
		space = false
		out = append(out, r)
	}
	return out
}

// spaceless reports a character of a script written without spaces.
func spaceless(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// agreement is 1 - distance(a, b) / max(len(a), len(b)) over normalised
// texts.
func agreement(got, want string) float64 {
	a, b := normalizeText(got), normalizeText(want)
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	return 1 - float64(editDistance(a, b))/float64(max(len(a), len(b)))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b []rune) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestAgreement(t *testing.T) {
	tests := []struct {
		name, got, want string
		score           float64
	}{
		{"same", "Hello world", "Hello world", 1},
		{"white space and page markers", "--- page 1 ---\nHello\n\n  world", "Hello world", 1},
		{"ligature and combining accent", "\ufb01ne cafe\u0301", "fine café", 1},
		{"line break inside Japanese", "図書館\nは", "図書館は", 1},
		{"one of four wrong", "abcx", "abcd", 0.75},
		{"nothing read", "", "abcd", 0},
		{"words run together", "Helloworld", "Hello world", 1 - 1.0/11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := agreement(tc.got, tc.want); fmt.Sprintf("%.4f", got) != fmt.Sprintf("%.4f", tc.score) {
				t.Errorf("agreement(%q, %q) = %.4f, want %.4f", tc.got, tc.want, got, tc.score)
			}
		})
	}
}

// pdftotext reads body with poppler's pdftotext, the reference reader;
// ok is false when it is not installed.
func pdftotext(tb testing.TB, body []byte) (text string, ok bool) {
	tb.Helper()
	exe, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
			tb.Fatal("pdftotext not found (Debian poppler-utils) and QUIVER_REQUIRE_PEERS=1")
		}
		return "", false
	}
	cmd := exec.CommandContext(context.Background(), exe, "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("pdftotext: %v", err)
	}
	return string(out), true
}

// TestPDFCorpusAgreement reads the corpus with Quiver's reader and with
// pdftotext, logs each one's agreement with the source per document, and
// fails when Quiver's is under minAgreement for any.
func TestPDFCorpusAgreement(t *testing.T) {
	if raceDetector {
		// A corpus read one document at a time: under the race detector it
		// takes minutes and proves nothing the plain runs do not.
		t.Skip("a corpus measure, without concurrency: run without -race")
	}
	corpus := loadCorpus(t)
	t.Logf("%-12s %8s %10s", "document", "quiver", "pdftotext")
	for _, d := range pdfCorpus {
		want, err := os.ReadFile(filepath.Join(corpusDir, d.name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(want)) != d.source() {
			t.Errorf("%s.txt is not the document's source text (print the corpus again with -regenerate)", d.name)
		}
		_, text, err := ReadPDF(corpus[d.name])
		if err != nil {
			t.Errorf("%s: %v", d.name, err)
		}
		score := agreement(text, d.source())
		ref := "-"
		if pt, ok := pdftotext(t, corpus[d.name]); ok {
			ref = fmt.Sprintf("%.4f", agreement(pt, d.source()))
		}
		t.Logf("%-12s %8.4f %10s", d.name, score, ref)
		if score < minAgreement {
			t.Errorf("%s: agreement %.4f, want at least %.2f; text:\n%s", d.name, score, minAgreement, excerptOf(text))
		}
	}
}

// BenchmarkReadPDFCorpus reads every corpus document with Quiver's reader
// (the engine compiled before the timer starts, as a running server has
// it); compare BenchmarkPDFToTextCorpus on the same files.
func BenchmarkReadPDFCorpus(b *testing.B) {
	corpus := loadCorpus(b)
	if _, _, err := ReadPDF(corpus["english"]); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, d := range pdfCorpus {
			if _, _, err := ReadPDF(corpus[d.name]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(pdfCorpus)), "ms/page")
}

// BenchmarkPDFToTextCorpus reads every corpus document with poppler's
// pdftotext, one process per file, as a reader outside Quiver would.
func BenchmarkPDFToTextCorpus(b *testing.B) {
	corpus := loadCorpus(b)
	if _, ok := pdftotext(b, corpus["english"]); !ok {
		b.Skip("pdftotext not installed (Debian poppler-utils)")
	}
	b.ResetTimer()
	for b.Loop() {
		for _, d := range pdfCorpus {
			pdftotext(b, corpus[d.name])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(pdfCorpus)), "ms/page")
}
