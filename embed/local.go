package embed

import (
	"context"
	"math"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// LocalRef is the built-in local embedder's model ref.
const LocalRef = "local:ngram-512"

// localDims is the local embedder's dimension.
const localDims = 512

// Local is the built-in embedder: hashed word and character n-gram
// features (feature hashing with a sign bit, sublinear term counts),
// scaled to unit length. It needs no network, no weights and no state,
// and gives the same vector for the same text in every process, so with
// it memory works offline out of the box. It matches words that share
// spelling (plurals, compounds, a missing diacritic, a typo) but not
// synonyms or translations: a real embedding model retrieves paraphrases
// far better, and configuring one re-indexes.
//
// Its features, from the text NFKC-normalised and case-folded: each word
// (a run of letters, digits and marks) as written; the word with its
// diacritics removed (Vietnamese "tôi" and "toi" share a feature); the
// character trigrams of each word with its diacritics removed, with the
// word's ends marked; and, in scripts written without spaces (Chinese,
// Japanese, Thai, ...), every pair of adjacent characters.
type Local struct{}

var _ Embedder = Local{}

// Model returns LocalRef and its dimension.
func (Local) Model() Model { return Model{Ref: LocalRef, Dims: localDims} }

// Embed returns the texts' vectors; it fails only on texts Check refuses
// or when ctx has ended.
func (l Local) Embed(ctx context.Context, texts []string, _ Kind) ([]Vector, error) {
	if err := Check(texts); err != nil {
		return nil, err
	}
	out := make([]Vector, len(texts))
	for i, t := range texts {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = l.vector(t)
	}
	return out, nil
}

// Feature weights: a whole word says more than one of its trigrams.
const (
	weightWord     = 1.0
	weightBare     = 0.7
	weightTrigram  = 0.35
	weightCharPair = 0.5
)

// vector embeds one text. A text with no word (only punctuation) gets a
// fixed vector of its own, so no vector is ever zero.
func (Local) vector(text string) Vector {
	counts := map[uint64]float64{}
	add := func(kind byte, s string, w float64) {
		counts[featureHash(kind, s)] += w
	}
	folder := cases.Fold()
	text = folder.String(norm.NFKC.String(text))
	for _, word := range words(text) {
		add('w', word, weightWord)
		bare := stripMarks(word)
		if bare != word {
			add('b', bare, weightBare)
		}
		r := []rune(bare)
		if unspacedWord(r) {
			for i := 0; i+1 < len(r); i++ {
				add('p', string(r[i:i+2]), weightCharPair)
			}
			continue
		}
		padded := append(append([]rune{'^'}, r...), '$')
		for i := 0; i+3 <= len(padded); i++ {
			add('t', string(padded[i:i+3]), weightTrigram)
		}
	}
	raw := make([]float32, localDims)
	if len(counts) == 0 {
		raw[0] = 1
	}
	for h, c := range counts {
		v := float32(1 + math.Log(c))
		if c < 1 {
			v = float32(c)
		}
		if h&(1<<63) != 0 {
			v = -v
		}
		raw[h%localDims] += v
	}
	v, ok := Unit(raw)
	if !ok {
		// Features cancelled out exactly: vanishingly rare.
		raw[0] = 1
		v, _ = Unit(raw)
	}
	return v
}

// words splits text into runs of letters, digits and marks.
func words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
}

// stripMarks removes diacritics: the word decomposed (NFD) without its
// combining marks, and đ as d (Vietnamese's one letter that does not
// decompose).
func stripMarks(word string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(word) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'đ':
			b.WriteRune('d')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unspacedWord reports whether a word is in a script written without
// spaces, where a "word" is a whole phrase and character pairs stand in
// for words.
func unspacedWord(r []rune) bool {
	for _, c := range r {
		if unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
			return true
		}
	}
	return false
}

// featureHash is 64-bit FNV-1a over the feature's kind and text: fixed,
// so vectors are the same in every process and release.
func featureHash(kind byte, s string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	h = (h ^ uint64(kind)) * prime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * prime
	}
	return h
}
