package intent

import (
	"strings"
	"unicode/utf8"
)

// Sources of a match.
const (
	SourcePack       = "pack"
	SourceCustom     = "custom"
	SourceFollowUp   = "follow-up"
	SourceHistory    = "history"
	SourceAttachment = "attachment"
	SourceAlways     = "always"
)

// entry kinds.
const (
	kindTrigger = iota
	kindVerb
	kindNoun
	kindIgnore
	kindFollowup
)

// entry is one compiled phrase.
type entry struct {
	kind   int
	target string
	combo  int // index into matcher.combos for verbs and nouns
	phrase string
	// raw is the phrase as written, for reporting.
	raw    string
	prefix bool // written with a trailing '*'
	spaced bool // needs word boundaries
	// wordStart and wordEnd say whether the phrase begins and ends with a
	// word rune: only such an edge needs a boundary ("send it to #"
	// matches "send it to #general", "% of" matches "15% of").
	wordStart, wordEnd bool
	lang               string
	source             string
	pattern            string // what the automaton searches: normalised, no '*'
}

// matcher finds the entries of a set of packs in normalised text.
type matcher struct {
	entries []entry
	lengths []int
	combos  []Combo
	ac      *automaton
}

// newMatcher compiles packs. source labels the matches ("pack", "custom").
func newMatcher(packs []Pack, source string) *matcher {
	m := &matcher{}
	add := func(kind int, target string, combo int, raw, lang string) {
		p := Normalise(raw)
		e := entry{kind: kind, target: target, combo: combo, raw: raw, lang: lang, source: source}
		if strings.HasSuffix(p, "*") {
			e.prefix, p = true, strings.TrimSuffix(p, "*")
		}
		e.phrase, e.pattern, e.spaced = p, p, !hasUnspaced(p)
		if first, _ := utf8.DecodeRuneInString(p); wordRune(first) {
			e.wordStart = true
		}
		if last, _ := utf8.DecodeLastRuneInString(p); wordRune(last) {
			e.wordEnd = true
		}
		m.entries = append(m.entries, e)
		m.lengths = append(m.lengths, len(p))
	}
	for _, pk := range packs {
		for _, t := range Targets { // fixed order: deterministic output
			for _, ph := range pk.Triggers[t] {
				add(kindTrigger, t, -1, ph, pk.Lang)
			}
		}
		for _, c := range pk.Combos {
			idx := len(m.combos)
			m.combos = append(m.combos, c)
			for _, v := range c.Verbs {
				add(kindVerb, c.Target, idx, v, pk.Lang)
			}
			for _, n := range c.Nouns {
				add(kindNoun, c.Target, idx, n, pk.Lang)
			}
		}
		for _, ph := range pk.Ignore {
			add(kindIgnore, "", -1, ph, pk.Lang)
		}
		for _, ph := range pk.Followups {
			add(kindFollowup, "", -1, ph, pk.Lang)
		}
	}
	patterns := make([]string, len(m.entries))
	for i, e := range m.entries {
		patterns[i] = e.pattern
	}
	m.ac = buildAutomaton(patterns)
	return m
}

// found is an entry occurring in a text at a byte span.
type found struct {
	e          *entry
	start, end int
}

// scan returns every entry occurrence in text (normalised) that respects
// its boundary rule.
func (m *matcher) scan(text string) []found {
	var out []found
	m.ac.find(text, m.lengths, func(h hit) {
		e := &m.entries[h.pattern]
		if e.spaced && !boundaryOK(text, h.start, h.end, e.wordStart, e.wordEnd && !e.prefix) {
			return
		}
		end := h.end
		if e.prefix {
			end = wordEnd(text, end)
		}
		out = append(out, found{e: e, start: h.start, end: end})
	})
	return out
}

// boundaryOK reports whether [start, end) starts a word (when atStart) and
// ends one (when atEnd). A rune of an unspaced script counts as a boundary,
// so "pdf" matches in "送ったpdf読んで".
func boundaryOK(text string, start, end int, atStart, atEnd bool) bool {
	if atStart && start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if spacedWordRune(r) {
			return false
		}
	}
	if atEnd && end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if spacedWordRune(r) {
			return false
		}
	}
	return true
}

// spacedWordRune reports whether r continues a word of a spaced script.
func spacedWordRune(r rune) bool { return wordRune(r) && !unspaced(r) }

// wordEnd returns the end of the word containing byte offset i.
func wordEnd(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !wordRune(r) {
			break
		}
		i += size
	}
	return i
}
