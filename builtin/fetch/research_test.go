package fetch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
)

// fakeSearcher answers every query with its hits, or its error.
type fakeSearcher struct {
	hits []Hit
	err  error
}

func (s fakeSearcher) Search(_ context.Context, _ string, count int) ([]Hit, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.hits[:min(count, len(s.hits))], nil
}

// topicPage is an HTML page with one paragraph on the question's topic
// among unrelated ones.
func topicPage(title, topic string) []byte {
	return fmt.Appendf(nil, `<!doctype html><html><head><title>%s</title></head><body><nav>Home · About</nav><article>
<h1>%s</h1>
<p>This opening paragraph talks about the weather on the coast and nothing else of note for readers today.</p>
<p>%s</p>
<p>A closing paragraph about the gift shop, its opening hours and the car park behind the visitor centre.</p>
</article></body></html>`, title, title, topic)
}

func researchServer(t *testing.T) (string, *sync64) {
	srv, hits := serve(t, map[string]page{
		"/a": {contentType: "text/html", body: topicPage("Page A", "Keepers wound the lens clockwork every four hours on winter nights.")},
		"/b": {contentType: "text/html", body: topicPage("Page B", "The clockwork weight drove the lens; keepers wound it by hand.")},
		"/c": {contentType: "text/html", body: topicPage("Page C", "Lens clockwork was regulated by a governor like a tower clock.")},
		"/d": {contentType: "text/html", body: topicPage("Page D", "Nothing relevant.")},
		"/e": {contentType: "text/html", body: topicPage("Page E", "Nothing relevant.")},
	})
	return srv.URL, hits
}

func hitsFor(base string, paths ...string) []Hit {
	var out []Hit
	for _, p := range paths {
		out = append(out, Hit{Title: "Hit " + p, URL: base + p + "?utm=1", Snippet: "snippet for " + p})
	}
	return out
}

func TestResearchReadsAtMostThreePages(t *testing.T) {
	base, hits := researchServer(t)
	searcher := fakeSearcher{hits: append(hitsFor(base, "/a", "/b", "/c", "/d", "/e"), Hit{Title: "dup", URL: base + "/a?utm=1"}, Hit{Title: "mail", URL: "mailto:x@example.com"})}
	tl := ResearchTool(Config{Client: &httpClientForTest}, searcher)
	got, err := call(t, tl, tool.Scope{TurnID: "t1"}, map[string]any{"question": "How often did keepers wind the lens clockwork?"})
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]int64{}
	for _, p := range []string{"/a", "/b", "/c", "/d", "/e"} {
		reads[p] = hits.get(p)
	}
	if diff := cmp.Diff(map[string]int64{"/a": 1, "/b": 1, "/c": 1, "/d": 0, "/e": 0}, reads); diff != "" {
		t.Errorf("pages read (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		"Read 3 of 3 pages (6 more may be read this turn)",
		"[1] Page A\nURL: " + base + "/a?utm=1\n\nKeepers wound the lens clockwork every four hours on winter nights.",
		"[2] Page B\nURL: " + base + "/b?utm=1",
		"[3] Page C\nURL: " + base + "/c?utm=1",
		"Other results, not read:\n- Hit /d — " + base + "/d?utm=1 — snippet for /d\n- Hit /e",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"gift shop", "weather on the coast", "mailto", "dup"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("answer contains %q:\n%s", unwanted, got)
		}
	}
}

func TestResearchSkipsFailedPage(t *testing.T) {
	base, _ := researchServer(t)
	searcher := fakeSearcher{hits: hitsFor(base, "/a", "/missing", "/c")}
	got, err := call(t, ResearchTool(Config{Client: &httpClientForTest}, searcher), tool.Scope{}, map[string]any{"question": "lens clockwork"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Read 2 of 3 pages. Cite",
		"[1] Page A", "[2] Page C",
		"Skipped (could not be read):\n- " + base + "/missing: fetch " + base + "/missing: HTTP 404 Not Found",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
}

func TestResearchTurnQuota(t *testing.T) {
	base, _ := researchServer(t)
	searcher := fakeSearcher{hits: hitsFor(base, "/a", "/b", "/c", "/d", "/e")}
	tl := ResearchTool(Config{Client: &httpClientForTest, PagesPerTurn: 4, CacheEntries: -1}, searcher)
	q := map[string]any{"question": "lens clockwork"}
	steps := []struct {
		name     string
		turn     string
		wantHead string
		wantErr  string
	}{
		{"first call reads the per-call quota", "t1", "Read 3 of 3 pages (1 more may be read this turn)", ""},
		{"second call reads what the turn has left", "t1", "Read 1 of 1 pages (0 more may be read this turn)", ""},
		{"third call is refused", "t1", "", "research_web has read its 4 pages for this turn"},
		{"another turn starts afresh", "t2", "Read 3 of 3 pages (1 more may be read this turn)", ""},
	}
	for _, st := range steps {
		got, err := call(t, tl, tool.Scope{TurnID: st.turn}, q)
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) {
				t.Errorf("%s: error = %v, want %q", st.name, err, st.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !strings.Contains(got, st.wantHead) {
			t.Errorf("%s: answer lacks %q:\n%s", st.name, st.wantHead, got)
		}
	}
}

func TestResearchErrors(t *testing.T) {
	tests := []struct {
		name     string
		searcher fakeSearcher
		question string
		want     string
		wantErr  string
		infra    bool
	}{
		{name: "no results", searcher: fakeSearcher{}, question: "anything", want: "No search results for: anything"},
		{name: "search fails", searcher: fakeSearcher{err: errors.New("search is unavailable right now")}, question: "x", wantErr: "research_web: search: search is unavailable right now"},
		{name: "infra failure passes on", searcher: fakeSearcher{err: tool.Infra(errors.New("down"))}, question: "x", wantErr: "down", infra: true},
		{name: "empty question", question: "  ", wantErr: "question is empty"},
		{name: "long question", question: strings.Repeat("é", 501), wantErr: "question is 501 characters, at most 500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, ResearchTool(Config{Client: &httpClientForTest}, tc.searcher), tool.Scope{}, map[string]any{"question": tc.question})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || tool.IsInfra(err) != tc.infra {
					t.Fatalf("error = %v (infra %v), want %q (infra %v)", err, tool.IsInfra(err), tc.wantErr, tc.infra)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("answer = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestExcerpts(t *testing.T) {
	text := "# Title\n\nIntro about nothing in particular, long enough to count as an opening paragraph here.\n\n" +
		"Tides rise twice a day.\n\nThe moon drives the tides, and the sun helps.\n\nShips wait for high tide.\n\n" + strings.Repeat("tide moon sun ", 100)
	tests := []struct {
		name, question string
		budget         int
		want           []string
	}{
		{"best three in page order", "What drives the tides: moon or sun?", 5000, []string{
			"Tides rise twice a day.",
			"The moon drives the tides, and the sun helps.",
			clip(strings.TrimSpace(strings.Repeat("tide moon sun ", 100)), passageChars),
		}},
		{"budget cuts the last passage", "moon drives sun", 60, []string{"The moon drives the tides, and the sun helps.", "tide moon sun…"}},
		{"no match shows the opening", "volcanoes", 5000, []string{"Intro about nothing in particular, long enough to count as an opening paragraph here.", clip(strings.TrimSpace(strings.Repeat("tide moon sun ", 100)), passageChars)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, excerpts(text, tc.question, tc.budget)); diff != "" {
				t.Errorf("excerpts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
