package document

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestChunksShort(t *testing.T) {
	if got := Chunks("  \n\n "); len(got) != 0 {
		t.Errorf("blank text: %d chunks", len(got))
	}
	want := []Chunk{{Index: 0, Offset: 2, Text: "short text"}}
	if diff := cmp.Diff(want, Chunks("\n short text \n")); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestChunksBoundaries(t *testing.T) {
	var paras []string
	for i := range 40 {
		paras = append(paras, strings.Repeat("Câu số "+string(rune('a'+i%26))+" nói điều gì đó. ", 8))
	}
	text := strings.Join(paras, "\n\n")
	chunks := Chunks(text)
	checkChunks(t, text, chunks)
	for _, c := range chunks[:len(chunks)-1] {
		// Each paragraph is about 200 runes: every cut lands on one.
		if !strings.HasSuffix(c.Text, ".") {
			t.Errorf("chunk %d ends mid-sentence: %q", c.Index, c.Text[len(c.Text)-20:])
		}
	}
	for i := 1; i < len(chunks); i++ {
		prev := chunks[i-1]
		if chunks[i].Offset >= prev.Offset+len(prev.Text) {
			t.Errorf("chunk %d does not overlap chunk %d", i, i-1)
		}
	}
	if diff := cmp.Diff(chunks, Chunks(text)); diff != "" {
		t.Errorf("not deterministic:\n%s", diff)
	}
}

func TestChunksNoBreaks(t *testing.T) {
	text := strings.Repeat("漢", 10_000)
	chunks := Chunks(text)
	checkChunks(t, text, chunks)
	if len(chunks) < 10_000/ChunkMaxRunes {
		t.Errorf("%d chunks", len(chunks))
	}
}

func TestChunksBounded(t *testing.T) {
	text := strings.Repeat("word ", MaxTextBytes/5)
	if n := len(Chunks(text)); n > MaxChunks {
		t.Errorf("%d chunks, over MaxChunks", n)
	}
	// MaxTextBytes of text without white space stays under the bound.
	if n := len(Chunks(strings.Repeat("x", MaxTextBytes))); n >= MaxChunks {
		t.Errorf("%d chunks of a text at MaxTextBytes: MaxChunks cuts it", n)
	}
}

// checkChunks: chunks are non-empty, bounded, in order, found at their
// offsets, and cover every non-space rune of text.
func checkChunks(t *testing.T, text string, chunks []Chunk) {
	t.Helper()
	covered := 0
	for i, c := range chunks {
		switch {
		case c.Index != i:
			t.Fatalf("chunk %d has index %d", i, c.Index)
		case c.Text == "" || strings.TrimSpace(c.Text) != c.Text:
			t.Fatalf("chunk %d is empty or untrimmed: %q", i, c.Text)
		case utf8.RuneCountInString(c.Text) > ChunkMaxRunes:
			t.Fatalf("chunk %d has %d runes", i, utf8.RuneCountInString(c.Text))
		case c.Offset < 0 || c.Offset+len(c.Text) > len(text) || text[c.Offset:c.Offset+len(c.Text)] != c.Text:
			t.Fatalf("chunk %d is not at its offset %d", i, c.Offset)
		case c.Offset > covered && strings.TrimSpace(text[covered:c.Offset]) != "":
			t.Fatalf("text before chunk %d is in no chunk: %q", i, text[covered:c.Offset])
		}
		covered = max(covered, c.Offset+len(c.Text))
	}
	if len(chunks) < MaxChunks && strings.TrimSpace(text[covered:]) != "" {
		t.Fatalf("the end of the text is in no chunk")
	}
}

func FuzzChunks(f *testing.F) {
	f.Add("one. two. three.\n\nfour")
	f.Add(strings.Repeat("ab. ", 1000))
	f.Add(strings.Repeat("\n", 3000))
	f.Add(strings.Repeat("漢字。", 900))
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		checkChunks(t, text, Chunks(text))
	})
}

func TestPageOf(t *testing.T) {
	if p, ok := PageOf("", 1); !ok || p.Pages != 1 || p.Text != "" {
		t.Errorf("empty text: %+v %v", p, ok)
	}
	line := strings.Repeat("ы", 99) + "\n"
	text := strings.Repeat(line, 1000) // 100,000 runes
	var joined strings.Builder
	p, ok := PageOf(text, 1)
	if !ok || p.Pages != 3 {
		t.Fatalf("page 1: pages %d, ok %v", p.Pages, ok)
	}
	for n := 1; n <= p.Pages; n++ {
		page, ok := PageOf(text, n)
		if !ok || page.Number != n || utf8.RuneCountInString(page.Text) > PageRunes {
			t.Fatalf("page %d: %d runes, ok %v", n, utf8.RuneCountInString(page.Text), ok)
		}
		if n < page.Pages && !strings.HasSuffix(page.Text, "\n") {
			t.Errorf("page %d does not end at a line break", n)
		}
		joined.WriteString(page.Text)
	}
	if joined.String() != text {
		t.Error("pages do not join into the text")
	}
	if p, ok := PageOf(text, 4); ok || p.Pages != 3 {
		t.Errorf("page 4: %+v %v", p, ok)
	}
	if _, ok := PageOf(text, 0); ok {
		t.Error("page 0 accepted")
	}
	// A text with no line breaks is cut at PageRunes exactly.
	if p, _ := PageOf(strings.Repeat("x", PageRunes+1), 1); p.Pages != 2 || len(p.Text) != PageRunes {
		t.Errorf("unbroken text: %d pages, first %d runes", p.Pages, len(p.Text))
	}
}

// TestJoinChunks: the chunks of a text join back into it, each overlap
// kept once, in scripts with and without spaces.
func TestJoinChunks(t *testing.T) {
	var paras, lines []string
	for i := range 60 {
		paras = append(paras, strings.Repeat("Sentence "+string(rune('a'+i%26))+" of paragraph says something. ", 5+i%4))
		lines = append(lines, "line "+strings.Repeat(string(rune('a'+i%26)), 30+i))
	}
	cases := map[string]string{
		"paragraphs": strings.Join(paras, "\n\n"),
		"lines":      strings.Join(lines, "\n"),
		"cjk":        strings.Repeat("東京は日本の首都です。人口は多い。", 400),
		"no breaks":  strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 150),
		"vietnamese": strings.Repeat("Dòng văn bản dài để chia trang; có dấu. ", 300),
		"short":      "one short chunk",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			chunks := Chunks(text)
			texts := make([]string, len(chunks))
			for i, c := range chunks {
				texts[i] = c.Text
			}
			if name != "short" && len(texts) < 2 {
				t.Fatalf("%d chunks: the case cuts nothing", len(texts))
			}
			if got, want := JoinChunks(texts), strings.TrimSpace(text); got != want {
				t.Errorf("joined %d chunks into %d runes, want %d; first difference at rune %d",
					len(texts), utf8.RuneCountInString(got), utf8.RuneCountInString(want), firstDiff(got, want))
			}
		})
	}
	if got := JoinChunks([]string{"first part.", "second part."}); got != "first part.\nsecond part." {
		t.Errorf("chunks without overlap: %q", got)
	}
	if got := JoinChunks(nil); got != "" {
		t.Errorf("no chunks: %q", got)
	}
}

func firstDiff(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	for i := range min(len(ra), len(rb)) {
		if ra[i] != rb[i] {
			return i
		}
	}
	return min(len(ra), len(rb))
}
