package intent

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Features of a message for the learned stage (Classifier), hashed into
// a fixed number of buckets (the hashing trick): from the normalised
// text (Normalise), each word as written and without its diacritics,
// each pair of adjacent words, each word's character trigrams and
// 4-grams with its ends marked (a typo or an inflection keeps most of
// them), and in scripts written without spaces, where a run of letters
// is a whole phrase, its characters, character pairs and triples (one
// Han character or Hangul syllable often carries the verb: 查, 画, 알).
// They are what the classifier sees of a message, in training and at
// detection alike.

// Feature kinds, hashed before the feature's text so that a word and a
// trigram of the same letters are different features.
const (
	featWord    = 'w'
	featBare    = 'b'
	featPair    = 'p'
	featGram3   = '3'
	featGram4   = '4'
	featCJK2    = 'c'
	featCJK3    = 'C'
	featCJK1    = 'u'
	featNoWords = '0'
)

// maxFeatureWords bounds the words a message contributes: a long
// message's opening says what it asks for, and the bound keeps the cost
// of detection linear and small whatever is pasted.
const maxFeatureWords = 64

// features appends the buckets (of 1<<bits) of the features of norm, a
// normalised message (Normalise), to dst.
func features(dst []uint32, norm string, bits uint) []uint32 {
	mask := uint32(1)<<bits - 1
	add := func(kind byte, s string) { dst = append(dst, featureHash32(kind, s)&mask) }
	addBytes := func(kind byte, b []byte) { dst = append(dst, fnvBytes(fnvStart(kind), b)&mask) }
	ws := featureWords(norm)
	if len(ws) == 0 {
		add(featNoWords, "")
		return dst
	}
	prev := ""
	var offBuf [64]int
	var padBuf [128]byte
	for i, w := range ws {
		if i == maxFeatureWords {
			break
		}
		bare := stripDiacritics(w)
		add(featWord, w)
		if bare != w {
			add(featBare, bare)
		}
		if prev != "" {
			h := fnvString(fnvString(fnvStart(featPair), prev), " ")
			dst = append(dst, fnvString(h, bare)&mask)
		}
		prev = bare
		if hasUnspaced(bare) {
			run := append(padBuf[:0], bare...)
			offs := runeOffsets(offBuf[:0], run)
			for n, kind := range [...]byte{featCJK1, featCJK2, featCJK3} {
				for j := 0; j+n+1 < len(offs); j++ {
					addBytes(kind, run[offs[j]:offs[j+n+1]])
				}
			}
			continue
		}
		padded := append(append(append(padBuf[:0], '^'), bare...), '$')
		offs := runeOffsets(offBuf[:0], padded)
		for n, kind := range [...]byte{featGram3, featGram4} {
			for j := 0; j+n+3 < len(offs); j++ {
				addBytes(kind, padded[offs[j]:offs[j+n+3]])
			}
		}
	}
	return dst
}

// featureWords splits normalised text into runs of letters, digits and
// marks; an apostrophe inside a word stays in it ("don't").
func featureWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '\''
	})
}

// stripDiacritics removes combining marks (the word decomposed, NFD,
// without them) and writes đ as d, so Vietnamese typed without its
// diacritics meets the same features.
func stripDiacritics(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'đ':
			b.WriteByte('d')
		default:
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// runeOffsets appends to dst the byte offset of each rune of s and then
// len(s): the n-gram of runes j to j+n is s[offs[j]:offs[j+n]].
func runeOffsets(dst []int, s []byte) []int {
	for i := 0; i < len(s); {
		dst = append(dst, i)
		_, n := utf8.DecodeRune(s[i:])
		i += n
	}
	return append(dst, len(s))
}

// featureHash32 is 32-bit FNV-1a over the kind and the text: fixed, so
// the committed weights mean the same in every build.
func featureHash32(kind byte, s string) uint32 { return fnvString(fnvStart(kind), s) }

// FNV-1a's constants, 32 bits.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// fnvStart is the hash of the kind alone; fnvString and fnvBytes go on
// over more bytes, so a feature made of parts is hashed without joining
// them.
func fnvStart(kind byte) uint32 { return (fnvOffset ^ uint32(kind)) * fnvPrime }

func fnvString(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * fnvPrime
	}
	return h
}

func fnvBytes(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = (h ^ uint32(c)) * fnvPrime
	}
	return h
}

// featureNorm is what a message's summed feature weights are scaled
// by: 1/sqrt(n) for n features, so every message is a unit vector and a
// long one's many features do not add up to a high score by their
// number alone ("12*7 please" scored 0.87 for memory without it).
func featureNorm(n int) float64 { return 1 / math.Sqrt(float64(max(n, 1))) }
