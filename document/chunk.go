package document

import (
	"slices"
	"strings"
	"unicode"
)

// Bounds of chunking, in runes.
const (
	// ChunkMaxRunes is the longest chunk; ChunkMinRunes the shortest
	// one cut before the end of the text. A chunk ends at the last
	// paragraph break in between, else the last line break, sentence end
	// or space, else at ChunkMaxRunes.
	ChunkMaxRunes = 1800
	ChunkMinRunes = 1000
	// ChunkOverlapRunes is about how much of a chunk's end the next one
	// repeats, so that a passage cut in two is still found whole.
	ChunkOverlapRunes = 200
	// MaxChunks bounds the chunks of one text; the rest of a longer text
	// is not chunked. MaxTextBytes of text makes fewer.
	MaxChunks = 6000
)

// Chunk is one piece of a text for indexing.
type Chunk struct {
	// Index counts chunks from 0, in text order.
	Index int
	// Offset is where the chunk starts in the text, in bytes.
	Offset int
	// Text is the chunk without surrounding white space; never empty.
	Text string
}

// Chunks cuts text into pieces of at most ChunkMaxRunes runes, each
// repeating about ChunkOverlapRunes of the previous one's end, on
// paragraph, line, sentence or word boundaries where there are some. The
// result depends on text alone; blank text gives none, and at most
// MaxChunks are returned.
func Chunks(text string) []Chunk {
	runes := []rune(text)
	// offsets[i] is the byte offset of runes[i].
	offsets := make([]int, len(runes)+1)
	b := 0
	for i, r := range runes {
		offsets[i] = b
		b += len(string(r))
	}
	offsets[len(runes)] = b
	var out []Chunk
	for start := 0; start < len(runes) && len(out) < MaxChunks; {
		end := len(runes)
		if end-start > ChunkMaxRunes {
			end = chunkEnd(runes, start)
		}
		if s, off := trimmed(runes, start, end); s != "" {
			out = append(out, Chunk{Index: len(out), Offset: offsets[off], Text: s})
		}
		if end == len(runes) {
			break
		}
		start = nextStart(runes, start, end)
	}
	return out
}

// chunkEnd is where the chunk from start ends: after the best break in
// [start+ChunkMinRunes, start+ChunkMaxRunes].
func chunkEnd(runes []rune, start int) int {
	lo, hi := start+ChunkMinRunes, start+ChunkMaxRunes
	for _, isBreak := range []func([]rune, int) bool{paragraphBreak, lineBreak, sentenceEnd, space} {
		for i := hi; i > lo; i-- {
			if isBreak(runes, i) {
				return i
			}
		}
	}
	return hi
}

// nextStart is where the chunk after [start, end) starts: about
// ChunkOverlapRunes before end, moved forward to the start of a word.
func nextStart(runes []rune, start, end int) int {
	s := end - ChunkOverlapRunes
	if s <= start {
		return end
	}
	for i := s; i < end; i++ {
		if sentenceEnd(runes, i) || lineBreak(runes, i) {
			return i
		}
	}
	for i := s; i < end; i++ {
		if space(runes, i) {
			return i
		}
	}
	return s
}

// The break tests say whether a chunk may end before runes[i].
func paragraphBreak(runes []rune, i int) bool {
	return i >= 2 && runes[i-1] == '\n' && runes[i-2] == '\n'
}

func lineBreak(runes []rune, i int) bool { return runes[i-1] == '\n' }

func sentenceEnd(runes []rune, i int) bool {
	switch runes[i-1] {
	case '。', '！', '？', '．':
		return true
	case '.', '!', '?', ';':
		return unicode.IsSpace(runes[i])
	}
	return false
}

func space(runes []rune, i int) bool { return unicode.IsSpace(runes[i-1]) }

// trimmed returns runes[start:end] without surrounding white space, and
// the index of its first rune.
func trimmed(runes []rune, start, end int) (string, int) {
	for start < end && unicode.IsSpace(runes[start]) {
		start++
	}
	for end > start && unicode.IsSpace(runes[end-1]) {
		end--
	}
	return strings.Clone(string(runes[start:end])), start
}

// JoinChunks rebuilds the text Chunks cut from its chunks' texts, in
// order: where a chunk begins with the end of the one before (their
// overlap, at most ChunkOverlapRunes, starting after a space or a
// sentence end as Chunks starts one), that part is kept once; two chunks
// that do not overlap are joined by a line break (the white space Chunks
// trimmed). A text repeating itself at a chunk boundary may come back
// one repetition short. Nil or no chunks give "".
func JoinChunks(chunks []string) string {
	var b strings.Builder
	var prev []rune
	for i, c := range chunks {
		next := []rune(c)
		k := 0
		if i > 0 {
			k = overlap(prev, next)
			if k == 0 {
				b.WriteByte('\n')
			}
		}
		b.WriteString(string(next[k:]))
		prev = next
	}
	return b.String()
}

// overlap is the length of the longest end of prev that next begins
// with and that Chunks could have repeated: at most ChunkOverlapRunes,
// shorter than prev, and either exactly ChunkOverlapRunes (a cut with no
// break near it) or following a break.
func overlap(prev, next []rune) int {
	for k := min(ChunkOverlapRunes, len(prev)-1, len(next)); k > 0; k-- {
		if k != ChunkOverlapRunes && !breakBefore(prev[len(prev)-k-1]) {
			continue
		}
		if slices.Equal(prev[len(prev)-k:], next[:k]) {
			return k
		}
	}
	return 0
}

// breakBefore reports whether a chunk may start after r.
func breakBefore(r rune) bool {
	switch r {
	case '。', '！', '？', '．', '.', '!', '?', ';':
		return true
	}
	return unicode.IsSpace(r)
}
