package fetch

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/dispatch"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

// TestRequiresFollowsExcludedProviders: a provider on the web tools'
// exclusion list gets neither fetch_url nor research_web, and the reason
// names it; other providers keep both.
func TestRequiresFollowsExcludedProviders(t *testing.T) {
	excluding := Config{Client: http.DefaultClient, ExcludeProviders: []string{"novelai", "ollama"}}
	const reason = "provider novelai is excluded from the web tools (web.exclude_providers, in config or Settings)"
	tests := []struct {
		name     string
		cfg      Config
		provider string
		want     string
	}{
		{"no list", Config{Client: http.DefaultClient}, "novelai", ""},
		{"excluded provider", excluding, "novelai", reason},
		{"another provider", excluding, "openai", ""},
	}
	for _, tc := range tests {
		for _, tl := range []*tool.Tool{FetchTool(tc.cfg), ResearchTool(tc.cfg, fakeSearcher{})} {
			t.Run(tc.name+"/"+tl.Name(), func(t *testing.T) {
				req := tl.Spec().Requires
				if req == nil {
					t.Fatal("the tool has no requirement: it is offered to every provider")
				}
				if got := req(turn.Selection{Model: turn.Model{Provider: tc.provider}}); got != tc.want {
					t.Errorf("Requires = %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestExcludeProvidersIsCopied: changing the caller's slice after building
// the tool does not change who gets it.
func TestExcludeProvidersIsCopied(t *testing.T) {
	list := []string{"novelai"}
	tl := FetchTool(Config{Client: http.DefaultClient, ExcludeProviders: list})
	list[0] = "openai"
	if got := tl.Spec().Requires(turn.Selection{Model: turn.Model{Provider: "novelai"}}); got == "" {
		t.Error("novelai got fetch_url after the caller reused its slice")
	}
}

// thousands formats n as the descriptions write it (7,000).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestDescriptionStatesTheLimits: the model reads the per-call limit, the
// default and how to page in the definition, and the numbers are the ones
// the handler enforces.
func TestDescriptionStatesTheLimits(t *testing.T) {
	tl := FetchTool(Config{Client: http.DefaultClient})
	d := tl.Declaration()
	for _, want := range []string{"at most " + thousands(MaxMaxLength) + " characters", "default " + thousands(DefaultMaxLength), "start_index"} {
		if !strings.Contains(d.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, d.Description)
		}
	}
	schema := string(tl.Schema())
	if want := fmt.Sprintf("at most %d (default %d)", MaxMaxLength, DefaultMaxLength); !strings.Contains(schema, want) {
		t.Errorf("max_length's description lacks %q: %s", want, schema)
	}
	if !strings.Contains(schema, `"start_index"`) {
		t.Errorf("schema has no start_index: %s", schema)
	}
	limits := map[string]int{}
	for _, l := range tl.Spec().Limits {
		limits[l.Name] = l.Value
	}
	if limits["max_length_default"] != DefaultMaxLength || limits["max_length_max"] != MaxMaxLength {
		t.Errorf("listed limits %v do not match the constants %d and %d", limits, DefaultMaxLength, MaxMaxLength)
	}
}

// TestAnswerFitsTheInlineThreshold: a whole answer at the maximum slice,
// with every header line as long as a page or a model can make it, stays
// within MaxHeaderChars of the slice, and within dispatch's default
// threshold, so a page never comes back as a stored reference to page
// through again (fetch_url is Unstored besides).
func TestAnswerFitsTheInlineThreshold(t *testing.T) {
	if MaxMaxLength+MaxHeaderChars > dispatch.DefaultThreshold {
		t.Fatalf("MaxMaxLength %d + MaxHeaderChars %d is over dispatch's threshold %d", MaxMaxLength, MaxHeaderChars, dispatch.DefaultThreshold)
	}
	longTitle := strings.Repeat("Title word ", 2000)
	var body strings.Builder
	fmt.Fprintf(&body, "<html><head><title>%s</title></head><body><article><h1>%s</h1>", longTitle, longTitle)
	for i := 0; body.Len() < 200<<10; i++ {
		fmt.Fprintf(&body, "<p>Paragraph %d of a long page, long enough to be the article that readability keeps.</p>\n", i)
	}
	body.WriteString("</article></body></html>")
	longPath := "/" + strings.Repeat("p", 3000)
	mux := http.NewServeMux()
	mux.HandleFunc("/start/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, longPath+"?session="+strings.Repeat("s", 1000), http.StatusFound)
	})
	mux.HandleFunc(longPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body.String())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// A body cap below the page's size adds the "cut before conversion" note.
	tl := FetchTool(Config{Client: srv.Client(), MaxBodyBytes: 150 << 10})
	requested := srv.URL + "/start/" + strings.Repeat("u", 3000) + "?q=" + strings.Repeat("x", 3000)
	got, err := call(t, tl, tool.Scope{}, map[string]any{"url": requested, "max_length": MaxMaxLength, "start_index": 12345})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Redirected to: ", "Title: Title word", "cut before conversion", "[More: call fetch_url again with start_index=19345 to read on.]"} {
		if !strings.Contains(got, want) {
			t.Fatalf("answer lacks %q, so the test does not reach the longest header:\n%.1500s", want, got)
		}
	}
	n := utf8.RuneCountInString(got)
	t.Logf("the longest header adds %d characters to a %d-character slice: %d in all", n-MaxMaxLength, MaxMaxLength, n)
	if n-MaxMaxLength > MaxHeaderChars {
		t.Errorf("answer adds %d characters to its %d-character slice, want at most %d:\n%.1500s", n-MaxMaxLength, MaxMaxLength, MaxHeaderChars, got)
	}
	if n > dispatch.DefaultThreshold {
		t.Errorf("answer is %d characters, over dispatch's threshold of %d", n, dispatch.DefaultThreshold)
	}
	if !tl.Spec().Unstored {
		t.Error("fetch_url is not Unstored: a dispatcher with a lower threshold would page a page")
	}
}

var sliceHeader = regexp.MustCompile(`(?m)^Content \(\w+\): characters (\d+)–(\d+) of (\d+)`)

// readWhole pages through url with slices of maxLen from start_index 0 and
// returns the text and the number of calls. It fails the test when a slice
// does not start where the last ended, when the continuation hint is
// missing, wrong or present at the end, or when the slices do not add up to
// the page.
func readWhole(t *testing.T, tl *tool.Tool, s tool.Scope, url string, maxLen int) (string, int) {
	t.Helper()
	var text strings.Builder
	start, calls, total := 0, 0, -1
	for {
		calls++
		if total >= 0 && calls > total/maxLen+2 {
			t.Fatalf("paging %s did not end after %d calls", url, calls)
		}
		out, err := call(t, tl, s, map[string]any{"url": url, "start_index": start, "max_length": maxLen})
		if err != nil {
			t.Fatal(err)
		}
		m := sliceHeader.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("answer has no position line:\n%.500s", out)
		}
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[2])
		total, _ = strconv.Atoi(m[3])
		if from != start || to != min(start+maxLen, total) {
			t.Fatalf("asked for %d+%d of %d, got characters %d–%d", start, maxLen, total, from, to)
		}
		body := out[strings.Index(out, "\n\n")+2:]
		if to == total {
			if moreHint.MatchString(body) {
				t.Fatalf("the last slice (%d–%d of %d) offers more", from, to, total)
			}
			text.WriteString(body)
			break
		}
		h := moreHint.FindStringSubmatch(body)
		if h == nil || h[1] != strconv.Itoa(to) {
			t.Fatalf("slice %d–%d of %d ends without the hint start_index=%d:\n…%s", from, to, total, to, body[max(0, len(body)-200):])
		}
		slice := strings.TrimSuffix(body, "\n\n"+h[0])
		if n := utf8.RuneCountInString(slice); n != to-from {
			t.Fatalf("slice %d–%d holds %d characters", from, to, n)
		}
		text.WriteString(slice)
		start = to
	}
	if n := utf8.RuneCountInString(text.String()); n != total {
		t.Fatalf("the slices hold %d characters, the page %d", n, total)
	}
	return text.String(), calls
}

// TestPagingReadsSavedPagesWhole reads each saved page under testdata (and
// longer pages generated from the saved article) whole, at the default
// slice and at the largest, and checks that the slices join with no gap or
// overlap into exactly the converted text. It logs the calls each takes:
//
//	go test -count=1 -run TestPagingReadsSavedPagesWhole -v ./builtin/fetch
func TestPagingReadsSavedPagesWhole(t *testing.T) {
	pages := map[string]page{
		"/article.html":   {contentType: "text/html; charset=utf-8", body: mustRead(t, "article.html")},
		"/report.pdf":     {contentType: "application/pdf", body: mustRead(t, "pdf/report.pdf")},
		"/compressed.pdf": {contentType: "application/pdf", body: mustRead(t, "pdf/compressed.pdf")},
		"/generated-60k":  {contentType: "text/html; charset=utf-8", body: largePage(t, 60<<10)},
		"/generated-600k": {contentType: "text/html; charset=utf-8", body: largePage(t, 600<<10)},
		"/generated-text": {contentType: "text/plain; charset=utf-8", body: []byte(strings.Repeat("Zeile für Zeile · 灯台\n", 1500))},
	}
	order := []string{"/article.html", "/report.pdf", "/compressed.pdf", "/generated-60k", "/generated-600k", "/generated-text"}
	srv, hits := serve(t, pages)
	tl := FetchTool(Config{Client: srv.Client()})
	f := newFetcher(Config{Client: srv.Client(), CacheEntries: -1})
	for _, path := range order {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			u, err := parsePageURL(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := f.document(t.Context(), tool.Scope{}, u)
			if err != nil {
				t.Fatal(err)
			}
			before := hits.get(path)
			s := tool.Scope{ConversationID: "paging " + path}
			calls := map[int]int{}
			for _, maxLen := range []int{DefaultMaxLength, MaxMaxLength} {
				got, n := readWhole(t, tl, s, srv.URL+path, maxLen)
				if diff := cmp.Diff(want.Text, got); diff != "" {
					t.Fatalf("max_length %d: the slices are not the page (-want +got):\n%.1000s", maxLen, diff)
				}
				chars := utf8.RuneCountInString(want.Text)
				if wantCalls := (chars + maxLen - 1) / maxLen; n != wantCalls {
					t.Errorf("max_length %d: %d calls for %d characters, want %d", maxLen, n, chars, wantCalls)
				}
				calls[maxLen] = n
			}
			if n := hits.get(path) - before; n != 1 {
				t.Errorf("the server was asked %d times while paging, want 1 (cached)", n)
			}
			t.Logf("%-16s %7d characters: %3d calls at the default %d, %3d at the maximum %d",
				path[1:], utf8.RuneCountInString(want.Text), calls[DefaultMaxLength], DefaultMaxLength, calls[MaxMaxLength], MaxMaxLength)
		})
	}
}
