package discovery

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

// TestAliasesAreWords: every alias key is lower case and one word (or a
// mark marksOf gives), and every value is words only, so no alias can
// carry FTS5 syntax into a query.
func TestAliasesAreWords(t *testing.T) {
	marks := []string{"#channel", "@user", "@email", ".file", ".url", ".viewport"}
	for k, v := range aliases {
		if !slices.Contains(marks, k) && (k != strings.ToLower(words(k)) || strings.Contains(k, " ")) {
			t.Errorf("key %q is not one lower-case word", k)
		}
		if v != words(v) || v == "" {
			t.Errorf("%q: value %q is not words", k, v)
		}
	}
	for k, v := range foreignAliases {
		if k != norm.NFC.String(strings.ToLower(words(k))) || strings.Contains(k, " ") || aliases[k] != "" {
			t.Errorf("foreign key %q is not one lower-case NFC word absent from aliases", k)
		}
		if v != words(v) || v == "" {
			t.Errorf("%q: value %q is not words", k, v)
		}
	}
	for k, v := range mergePhrases() {
		if f := strings.Fields(k); len(f) != 2 || k != norm.NFC.String(strings.ToLower(words(k))) {
			t.Errorf("phrase key %q is not two lower-case words", k)
		}
		if v != words(v) || v == "" {
			t.Errorf("%q: value %q is not words", k, v)
		}
	}
	for _, m := range marks {
		if aliases[m] == "" {
			t.Errorf("mark %q has no alias", m)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	for _, c := range []struct {
		query           string
		terms, expanded []string
	}{
		// Stop words out, the aliases of the words left (and of the
		// stop words) in the expansion, no word twice.
		{"what's on my calendar", []string{"calendar"}, []string{"list"}},
		{"schedule a meeting", []string{"schedule", "meeting"}, []string{"calendar", "events", "event"}},
		// Inflected forms find their alias.
		{"meetings", []string{"meetings"}, []string{"calendar", "event"}},
		{"booked", []string{"booked"}, []string{"create", "calendar", "event"}},
		{"replies", []string{"replies"}, nil},
		// A query of stop words only keeps them.
		{"is it", []string{"is", "it"}, nil},
		// Marks: a channel, a file name, a web address, a percent.
		{"#general", []string{"general"}, []string{"channel", "slack"}},
		{"notes.md", []string{"notes", "md"}, []string{"text", "file", "files"}},
		{"example.com", []string{"example", "com"}, []string{"url", "page", "web"}},
		{"15%", []string{"15", "percent"}, []string{"percentages", "arithmetic", "calculate"}},
		// Other languages: their stop words out, their aliases in, a
		// decomposed (NFD) query read as its composed form.
		{"tắt đèn của tôi", []string{"tắt", "đèn"}, []string{"turn", "off", "light", "entity"}},
		{norm.NFD.String("tắt đèn"), []string{"tắt", "đèn"}, []string{"turn", "off", "light", "entity"}},
		{"crear una factura", []string{"crear", "factura"}, []string{"create", "invoice"}},
	} {
		terms, expanded := queryTerms(c.query)
		if diff := cmp.Diff(c.terms, terms); diff != "" {
			t.Errorf("%q terms (-want +got):\n%s", c.query, diff)
		}
		if diff := cmp.Diff(c.expanded, expanded); diff != "" {
			t.Errorf("%q expansion (-want +got):\n%s", c.query, diff)
		}
	}
}

// TestQueryTermsBounded: however long the query, at most maxQueryTerms
// words and maxQueryTerms alias words are searched.
func TestQueryTermsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 3 * maxQueryTerms {
		fmt.Fprintf(&b, "word%d ", i)
	}
	for k := range aliases {
		b.WriteString(k + " ")
	}
	terms, expanded := queryTerms(b.String())
	if len(terms) != maxQueryTerms || len(expanded) != maxQueryTerms {
		t.Errorf("%d terms and %d alias words, want %d of each", len(terms), len(expanded), maxQueryTerms)
	}
}

// TestIndexCacheBounded: the index keeps the hits of at most maxCached
// words, however many distinct words it is asked, and answers past the
// bound as before it.
func TestIndexCacheBounded(t *testing.T) {
	ctx := context.Background()
	ix, err := NewIndex(ctx, fakeTools(t, 3, "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for i := range maxCached + 10 {
		if _, err := ix.Search(ctx, fmt.Sprintf("word%d", i), 5); err != nil {
			t.Fatal(err)
		}
	}
	if len(ix.cache) != maxCached {
		t.Errorf("%d words cached, want %d", len(ix.cache), maxCached)
	}
	got, err := ix.Search(ctx, "alpha", 5)
	if err != nil || len(got) != 3 {
		t.Errorf("past the bound: %v, %v; want the 3 tools", got, err)
	}
}

// TestQueryGroups: each word its own group with its aliases; a stop word
// with aliases, a phrase of phraseAliases and a mark make groups without
// a word asked.
func TestQueryGroups(t *testing.T) {
	got := queryGroups("how many rows in #ops")
	want := []group{
		{word: "many", aliases: []string{"count"}},
		{word: "rows", aliases: []string{"database", "query"}},
		{word: "ops"},
		{aliases: []string{"count", "calculate"}}, // "how many"
		{aliases: []string{"channel", "slack"}},   // "#ops"
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(group{})); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

// mergePhrases is phraseAliases and foreignPhrases in one map.
func mergePhrases() map[string]string {
	m := map[string]string{}
	for k, v := range phraseAliases {
		m[k] = v
	}
	for k, v := range foreignPhrases {
		m[k] = v
	}
	for k, v := range spanPhrases {
		m[k] = v
	}
	return m
}

// TestMarksOf: the marks a query's written conventions give, screen
// sizes and paths included, and none for numbers that are no size.
func TestMarksOf(t *testing.T) {
	for q, want := range map[string][]string{
		"does it fit a 1280x800 screen":    {".viewport"},
		"check at 375×667 and 1440X900":    {".viewport", ".viewport"},
		"a 375px wide column":              {".viewport"},
		"show src/main.py from acme/api":   {".file"},
		"read notes.md":                    {".file"},
		"3x more, 7x, 1x2, 123456x800":     nil,
		"open example.com/docs for #team":  {".url", "#channel"},
		"from reports/ to reports/2024/q3": nil,
	} {
		if got := marksOf(q); !slices.Equal(got, want) {
			t.Errorf("marksOf(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestQueryGroupsSpan: a spanPhrases key is read with up to two words
// between its words, never with more, and the words a model asks for
// any tool with are not searched.
func TestQueryGroupsSpan(t *testing.T) {
	has := func(q, phraseWord string) bool {
		for _, g := range queryGroups(q) {
			if g.word == "" && slices.Contains(g.aliases, phraseWord) {
				return true
			}
		}
		return false
	}
	if !has("let the team know", "post") {
		t.Error(`"let the team know" gives no "let … know" group`)
	}
	if has("let me see what the whole team will know", "post") {
		t.Error(`"let … know" read across five words`)
	}
	for _, g := range queryGroups("a tool able to check the weather") {
		if g.word == "tool" || g.word == "able" {
			t.Errorf("%q searched", g.word)
		}
	}
}
