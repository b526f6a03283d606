package discovery

import (
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// queryTerms reads a query the way people ask for a tool: its words
// (the query made NFC first), lower case, without the words that say
// nothing about a tool (stopWords, foreignStopWords) unless the query
// has no other, and the catalog words the aliases tables give for its
// words, stop words included (the expansion, ranked at a lower weight
// than the words asked), with the words its marks give (marksOf). A "%"
// counts as the word "percent". Both lists keep their first occurrence
// of a word only, and expansion holds no word of terms; each is at most
// maxQueryTerms long.
func queryTerms(query string) (terms, expansion []string) {
	query = norm.NFC.String(query)
	all := strings.Fields(strings.ToLower(words(strings.ReplaceAll(query, "%", " percent "))))
	for _, w := range all {
		if !isStop(w) && !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	if len(terms) == 0 {
		for _, w := range all {
			if !slices.Contains(terms, w) {
				terms = append(terms, w)
			}
		}
	}
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	for _, w := range append(all, marksOf(query)...) {
		for _, a := range aliasesOf(w) {
			if !slices.Contains(terms, a) && !slices.Contains(expansion, a) && len(expansion) < maxQueryTerms {
				expansion = append(expansion, a)
			}
		}
	}
	return terms, expansion
}

// aliasesOf is the aliases of w, or else of w without an English
// inflection: a plural, a past or an -ing form ("meetings", "booked",
// "scheduling", "replies"), or else its foreignAliases.
func aliasesOf(w string) []string {
	if a, ok := aliases[w]; ok {
		return strings.Fields(a)
	}
	for _, r := range inflections {
		if s, ok := strings.CutSuffix(w, r.suffix); ok && len(s) > 2 {
			if a, ok := aliases[s+r.base]; ok {
				return strings.Fields(a)
			}
		}
	}
	return foreignAliasesOf(w)
}

// inflections are the English endings aliasesOf drops, each with what
// replaces it, tried in order.
var inflections = []struct{ suffix, base string }{
	{"ies", "y"}, {"es", ""}, {"s", ""}, {"ing", ""}, {"ing", "e"}, {"ed", ""}, {"ed", "e"}, {"d", ""},
}

// marksOf is the alias keys a query's written conventions give: "#name"
// a chat channel, "@name" a user, an address with "@" inside it an
// email, a name with a file extension ("notes.md", "budget.xlsx") a file,
// and one with a web domain or a scheme ("example.com", "https://…") a
// web page; a path ending in such a name ("src/main.py") a file, and a
// screen size ("1280x800", "375px") a viewport (isScreenSize).
func marksOf(query string) []string {
	var out []string
	for _, f := range strings.Fields(strings.ToLower(query)) {
		f = strings.Trim(f, ".,;:!?()[]\"'")
		at := strings.IndexByte(f, '@')
		switch {
		case strings.HasPrefix(f, "#") && len(f) > 1:
			out = append(out, "#channel")
		case at == 0 && len(f) > 1:
			out = append(out, "@user")
		case at > 0 && strings.Contains(f[at:], "."):
			out = append(out, "@email")
		case strings.HasPrefix(f, "http://"), strings.HasPrefix(f, "https://"), strings.HasPrefix(f, "www."):
			out = append(out, ".url")
		case isScreenSize(f):
			out = append(out, ".viewport")
		default:
			first := strings.SplitN(f, "/", 2)[0]
			if dot := strings.LastIndexByte(first, '.'); dot > 0 {
				switch ext := first[dot+1:]; {
				case fileExtensions[ext]:
					out = append(out, ".file")
				case webDomains[ext]:
					out = append(out, ".url")
				}
			} else if last := f[strings.LastIndexByte(f, '/')+1:]; last != f {
				// A path ("src/main.py"): its last part names the file.
				if dot := strings.LastIndexByte(last, '.'); dot > 0 && fileExtensions[last[dot+1:]] {
					out = append(out, ".file")
				}
			}
		}
	}
	return out
}

// isScreenSize reports whether f is a screen or viewport size: two
// numbers of 2 to 5 digits joined by "x" or "×" ("1280x800",
// "375×667"), or a number of pixels ("375px").
func isScreenSize(f string) bool {
	digits := func(s string) bool {
		if len(s) < 2 || len(s) > 5 {
			return false
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return false
			}
		}
		return true
	}
	if n, ok := strings.CutSuffix(f, "px"); ok {
		return digits(n)
	}
	for _, sep := range []string{"x", "×"} {
		if a, b, ok := strings.Cut(f, sep); ok {
			return digits(a) && digits(b)
		}
	}
	return false
}

// fileExtensions and webDomains are the endings marksOf reads as a
// file's and a web address's.
var (
	fileExtensions = setOf("txt md markdown yaml yml json csv tsv xlsx xls docx doc pdf pptx go py js ts html css toml ini log sql xml")
	webDomains     = setOf("com org net io dev app co edu gov info")
)

// stopWords are English words that name no tool: pronouns, articles,
// auxiliaries, question words, prepositions, politeness, and the verbs
// that say nothing of the task ("get", "show", "give"), and the words a
// model asks for any tool with ("a tool to…", "a function for…", "able
// to…", "capability"), which would rank the tools named "tool"
// (enable_tools, read_tool_result) first for every such query. Other words of
// tools' names ("list", "search", "find", "off", "next") are not, even
// when common. A stop word may still have aliases ("who" asks for
// facts).
var stopWords = setOf(`a about above after again all also am an and any are as at be because been before being
	below between both but by can could did do does doing during each either else ever every few for from
	further had has have having he her here hers him his how i if in into is it its itself just let lets like me
	mine more most much must my myself no nor not now of on once only or other our ours out over own please
	pretty quite rather really same she should so some such than thank thanks that the their them then there
	these they this those though through to too under until up us very was we were what whats when where which
	while who whom whose why will with would yet you your yours s t d ll re ve m
	get got give show keep want need
	tool tools function functions capability capabilities ability abilities able capable possible`)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// maxSpan is how far apart the two words of a spanPhrases key may be
// (3: two words between them).
const maxSpan = 3

// group is one word of a query: the word itself when it is searched
// (not a stop word, unless the query has only those; "" otherwise) and
// the alias words it gives that are not words of the query.
type group struct {
	word    string
	aliases []string
}

// queryGroups is the words of query (queryTerms), each with its aliases;
// the aliases of stop words, phrases (two words together,
// phraseAliases; two words at most maxSpan apart, spanPhrases) and marks
// make groups of their own. At most
// maxQueryTerms words and maxQueryTerms alias words in all.
func queryGroups(query string) []group {
	query = norm.NFC.String(query)
	terms, _ := queryTerms(query)
	all := strings.Fields(strings.ToLower(words(strings.ReplaceAll(query, "%", " percent "))))
	var out []group
	nAlias := 0
	done := map[string]bool{}
	add := func(w string, direct bool, aliases []string) {
		if done[w] {
			return
		}
		done[w] = true
		g := group{}
		if direct {
			g.word = w
		}
		for _, a := range aliases {
			if !slices.Contains(terms, a) && !slices.Contains(g.aliases, a) && nAlias < maxQueryTerms {
				g.aliases = append(g.aliases, a)
				nAlias++
			}
		}
		if g.word != "" || len(g.aliases) > 0 {
			out = append(out, g)
		}
	}
	for _, w := range all {
		add(w, slices.Contains(terms, w), aliasesOf(w))
	}
	for i := 1; i < len(all); i++ {
		p := all[i-1] + " " + all[i]
		if a, ok := phraseAliases[p]; ok {
			add(p, false, strings.Fields(a))
		} else if a, ok := foreignPhrases[p]; ok {
			add(p, false, strings.Fields(a))
		}
	}
	// A verb and its complement with the object between them ("let the
	// team know", "mark the task as done"): up to maxSpan words apart.
	for i := range all {
		for j := i + 1; j < len(all) && j <= i+maxSpan; j++ {
			p := all[i] + " " + all[j]
			if a, ok := spanPhrases[p]; ok {
				add(p, false, strings.Fields(a))
			}
		}
	}
	for _, m := range marksOf(query) {
		add(m, false, aliasesOf(m))
	}
	return out
}
