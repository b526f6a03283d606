package fetch

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Excerpt sizes.
const (
	maxPassages    = 3
	passageChars   = 700
	minLeadChars   = 80
	minTermRunes   = 2
	noMatchLeadMax = 2
)

// stopwords are English words too common to say a paragraph is on topic.
var stopwords = map[string]bool{
	"the": true, "and": true, "for": true, "are": true, "was": true, "were": true, "what": true,
	"which": true, "who": true, "whom": true, "how": true, "why": true, "when": true, "where": true,
	"does": true, "did": true, "with": true, "from": true, "that": true, "this": true, "these": true,
	"those": true, "into": true, "about": true, "have": true, "has": true, "had": true, "can": true,
	"will": true, "would": true, "should": true, "could": true, "its": true, "their": true, "there": true,
	"is": true, "in": true, "of": true, "to": true, "on": true, "at": true, "by": true, "an": true,
	"or": true, "be": true, "do": true, "as": true, "it": true, "if": true, "me": true, "my": true,
	"we": true, "you": true, "your": true, "our": true, "not": true, "any": true, "all": true,
}

// terms returns the distinct lower-case words of s worth matching.
func terms(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if utf8.RuneCountInString(w) >= minTermRunes && !stopwords[w] {
			out[w] = true
		}
	}
	return out
}

// excerpts returns up to maxPassages paragraphs of text that share the most
// distinct terms with question, in page order, each clipped to passageChars
// and together within budget characters. When no paragraph shares a term,
// the page's opening paragraphs stand in.
func excerpts(text, question string, budget int) []string {
	want := terms(question)
	paras := paragraphs(text)
	type scored struct{ i, score int }
	var ranked []scored
	for i, p := range paras {
		n := 0
		for t := range terms(p) {
			if want[t] {
				n++
			}
		}
		if n > 0 {
			ranked = append(ranked, scored{i, n})
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].score > ranked[b].score })
	var pick []int
	for _, r := range ranked[:min(len(ranked), maxPassages)] {
		pick = append(pick, r.i)
	}
	if len(pick) == 0 {
		for i, p := range paras {
			if len(pick) < noMatchLeadMax && utf8.RuneCountInString(p) >= minLeadChars {
				pick = append(pick, i)
			}
		}
	}
	sort.Ints(pick)
	var out []string
	for _, i := range pick {
		p := clip(paras[i], min(passageChars, budget))
		if budget <= 0 || p == "" {
			break
		}
		budget -= utf8.RuneCountInString(p)
		out = append(out, p)
	}
	return out
}

// paragraphs splits text at blank lines and drops empty pieces.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// clip cuts s to at most n characters, marking a cut with "…".
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
