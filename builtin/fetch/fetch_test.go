package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quiverhq/quiver/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

// page is one canned response of a loopback test server.
type page struct {
	contentType string
	status      int
	body        []byte
}

// serve starts a loopback server answering each path from pages (404 for
// others) and counting requests per path.
func serve(t testing.TB, pages map[string]page) (*httptest.Server, *sync64) {
	t.Helper()
	hits := &sync64{m: map[string]*atomic.Int64{}}
	for p := range pages {
		hits.m[p] = new(atomic.Int64)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		hits.m[r.URL.Path].Add(1)
		if p.contentType != "" {
			w.Header().Set("Content-Type", p.contentType)
		}
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
		w.Write(p.body)
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

// sync64 counts requests per path; the map itself is fixed before use.
type sync64 struct{ m map[string]*atomic.Int64 }

func (s *sync64) get(path string) int64 { return s.m[path].Load() }

// call runs tl with args and returns its content or error.
func call(t testing.TB, tl *tool.Tool, s tool.Scope, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Run(context.Background(), s, raw)
	return res.Content, err
}

func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func encode(t testing.TB, e encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestToolSpecs(t *testing.T) {
	type view struct {
		Name, Family string
		Macros       []string
		Access       tool.Access
		AlwaysOn     bool
	}
	cfg := Config{Client: http.DefaultClient}
	tests := []struct {
		name string
		tl   *tool.Tool
		want view
	}{
		{"fetch_url", FetchTool(cfg), view{"fetch_url", "url_fetch", []string{"url_fetch_tool", "url_metadata_tool"}, tool.Read, false}},
		{"research_web", ResearchTool(cfg, fakeSearcher{}), view{"research_web", "research", []string{"research_tool"}, tool.Read, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.tl.Spec()
			got := view{s.Name, s.Family, s.Macros, s.Access, s.AlwaysOn}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefinitionSize bounds what each tool costs in every request that
// offers it.
func TestDefinitionSize(t *testing.T) {
	const limit = 1000
	cfg := Config{Client: http.DefaultClient}
	for _, tl := range []*tool.Tool{FetchTool(cfg), ResearchTool(cfg, fakeSearcher{})} {
		t.Run(tl.Name(), func(t *testing.T) {
			def, err := json.Marshal(tl.Declaration())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("definition is %d characters: %s", tl.DeclarationChars(), def)
			if tl.DeclarationChars() > limit {
				t.Errorf("definition is %d characters, want at most %d", tl.DeclarationChars(), limit)
			}
		})
	}
}

func TestConfigCheck(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"plain", Config{Client: http.DefaultClient}, ""},
		{"no client", Config{}, "Client is required"},
		{"crawl4ai in public mode", Config{Client: http.DefaultClient, Crawl4AIURL: "http://127.0.0.1:11235"}, "only in self-hosted mode"},
		{"crawl4ai self-hosted", Config{Client: http.DefaultClient, SelfHosted: true, Crawl4AIURL: "http://127.0.0.1:11235"}, ""},
		{"crawl4ai bad url", Config{Client: http.DefaultClient, SelfHosted: true, Crawl4AIURL: "ftp://x"}, "not an http(s) URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Check()
			if got := errString(err); !strings.Contains(got, tc.wantErr) || (tc.wantErr == "") != (err == nil) {
				t.Errorf("Check() = %q, want an error containing %q", got, tc.wantErr)
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Error("FetchTool with a Crawl4AI URL in public mode did not panic")
		}
	}()
	FetchTool(Config{Client: http.DefaultClient, Crawl4AIURL: "http://127.0.0.1:1"})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestArticleGolden converts a saved article page wrapped in navigation,
// scripts, styles and ads; the Markdown is in testdata/article.md
// (rewrite with -update).
func TestArticleGolden(t *testing.T) {
	f := newFetcher(Config{Client: http.DefaultClient})
	u, _ := url.Parse("https://coastal.example/history/lighthouse-time")
	d, err := f.convert(context.Background(), mustRead(t, "article.html"), "text/html; charset=utf-8", u)
	if err != nil {
		t.Fatal(err)
	}
	got := "Title: " + d.Title + "\nFormat: " + d.Format + "\n\n" + d.Text + "\n"
	golden.Check(t, "article.md", got)
	for _, junk := range []string{"gtag", "dataLayer", "font-family", "Subscribe", "Advertisement", "CloudBoat", "Related stories", "All rights reserved", "Sign up"} {
		if strings.Contains(d.Text, junk) {
			t.Errorf("converted article contains boilerplate %q", junk)
		}
	}
	for _, keep := range []string{"noon mark", "## Clockwork and the rotating lens", "https://coastal.example/history/station-clocks.html", "| Noon mark |"} {
		if !strings.Contains(d.Text, keep) {
			t.Errorf("converted article lacks %q", keep)
		}
	}
}

func TestFetchContentTypes(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
	srv, _ := serve(t, map[string]page{
		"/article":  {contentType: "text/html; charset=utf-8", body: mustRead(t, "article.html")},
		"/sniffed":  {body: []byte("<!doctype html><html><head><title>Sniffed</title></head><body><nav>Menu</nav><p>Only a short paragraph here.</p></body></html>")},
		"/notes":    {contentType: "text/plain; charset=utf-8", body: []byte("  line one\nline two  \n")},
		"/data":     {contentType: "application/json", body: []byte(`{"b":[1,2],"a":{"c":"é"}}`)},
		"/badjson":  {contentType: "application/json", body: []byte(`{"a":`)},
		"/logo":     {contentType: "image/png", body: png},
		"/archive":  {contentType: "application/zip", body: []byte("PK\x03\x04")},
		"/blob":     {contentType: "application/octet-stream", body: []byte("\x00\x01\x02\x03binary\x00")},
		"/paper":    {contentType: "application/pdf", body: mustRead(t, "pdf/report.pdf")},
		"/missing":  {contentType: "text/plain", status: http.StatusNotFound, body: []byte("gone")},
		"/empty":    {contentType: "text/plain", body: []byte("  \n ")},
		"/feed.xml": {contentType: "application/rss+xml", body: []byte("<rss><channel><title>Feed</title></channel></rss>")},
	})
	tl := FetchTool(Config{Client: srv.Client()})
	tests := []struct {
		name     string
		url      string
		contains []string
		lacks    []string
		wantErr  string
	}{
		{name: "html article", url: srv.URL + "/article", contains: []string{"Title: How Lighthouse Keepers Kept Time", "Content (markdown): characters 0–", "noon mark"}, lacks: []string{"gtag", "Subscribe", "[More:"}},
		{name: "html without content type falls back to the whole body", url: srv.URL + "/sniffed", contains: []string{"Title: Sniffed", "Only a short paragraph here."}, lacks: []string{"Menu"}},
		{name: "plain text passes through", url: srv.URL + "/notes", contains: []string{"Content (text): characters 0–17 of 17\n\nline one\nline two"}},
		{name: "json pretty-printed", url: srv.URL + "/data", contains: []string{"Content (json)", "{\n \"b\": [\n  1,\n  2\n ],\n \"a\": {\n  \"c\": \"é\"\n }\n}"}},
		{name: "invalid json passes through", url: srv.URL + "/badjson", contains: []string{"{\"a\":"}},
		{name: "xml feed as text", url: srv.URL + "/feed.xml", contains: []string{"Content (text)", "<rss>"}},
		{name: "image refused", url: srv.URL + "/logo", wantErr: "cannot read image/png content"},
		{name: "zip refused", url: srv.URL + "/archive", wantErr: "cannot read application/zip content"},
		{name: "octet-stream refused after sniffing", url: srv.URL + "/blob", wantErr: "cannot read application/octet-stream content"},
		{name: "pdf read as text", url: srv.URL + "/paper", contains: []string{"Title: Über Leuchttürme", "Content (text)", "--- page 1 ---\nLighthouse keepers kept time"}},
		{name: "http error status", url: srv.URL + "/missing", wantErr: "HTTP 404 Not Found"},
		{name: "empty page", url: srv.URL + "/empty", wantErr: "has no readable text"},
		{name: "ftp scheme", url: "ftp://example.com/file", wantErr: "must start with http:// or https://"},
		{name: "credentials", url: "http://user:pw@example.com/", wantErr: "must not carry credentials"},
		{name: "no host", url: "http:///path", wantErr: "no host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, tl, tool.Scope{}, map[string]any{"url": tc.url})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("fetch_url(%s) error = %v, want one containing %q", tc.url, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q is more than one line", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("fetch_url(%s): %v", tc.url, err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(got, s) {
					t.Errorf("answer lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tc.lacks {
				if strings.Contains(got, s) {
					t.Errorf("answer contains %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestFetchCharsets(t *testing.T) {
	srv, _ := serve(t, map[string]page{
		"/latin1": {contentType: "text/plain; charset=iso-8859-1", body: encode(t, charmap.ISO8859_1, "Crème brûlée à la café")},
		"/cp1251": {contentType: "text/html", body: append([]byte(`<html><head><meta charset="windows-1251"><title>`), encode(t, charmap.Windows1251, "Привет</title></head><body><p>Добрый день, мир.</p></body></html>")...)},
		"/sjis":   {contentType: "text/html; charset=Shift_JIS", body: encode(t, japanese.ShiftJIS, "<html><head><title>灯台</title></head><body><p>灯台守は時計を巻いた。</p></body></html>")},
		"/noname": {contentType: "text/plain", body: []byte("caf\xe9")},
	})
	tl := FetchTool(Config{Client: srv.Client()})
	tests := []struct {
		name, path string
		want       []string
	}{
		{"latin-1 from the header", "/latin1", []string{"Crème brûlée à la café"}},
		{"windows-1251 from a meta tag", "/cp1251", []string{"Title: Привет", "Добрый день, мир."}},
		{"shift_jis from the header", "/sjis", []string{"Title: 灯台", "灯台守は時計を巻いた。"}},
		{"undeclared non-utf-8 read as windows-1252", "/noname", []string{"café"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, tl, tool.Scope{}, map[string]any{"url": srv.URL + tc.path})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("answer lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

var moreHint = regexp.MustCompile(`\[More: call fetch_url again with start_index=(\d+) to read on\.\]$`)

func TestFetchSlicing(t *testing.T) {
	// 120,000 characters, some of them multi-byte, so that slicing by bytes
	// would show.
	var sb strings.Builder
	for i := 0; sb.Len() < 120000; i++ {
		fmt.Fprintf(&sb, "line %05d ·\n", i)
	}
	text := strings.TrimSpace(sb.String())
	total := len([]rune(text))
	srv, hits := serve(t, map[string]page{"/long": {contentType: "text/plain; charset=utf-8", body: []byte(text)}})
	tl := FetchTool(Config{Client: srv.Client()})
	u := srv.URL + "/long"
	tests := []struct {
		name       string
		args       map[string]any
		wantHeader string
		wantNext   int // 0: no hint
		wantErr    string
	}{
		{name: "default slice", args: map[string]any{"url": u}, wantHeader: fmt.Sprintf("characters 0–%d of %d", DefaultMaxLength, total), wantNext: DefaultMaxLength},
		{name: "maximum slice", args: map[string]any{"url": u, "max_length": MaxMaxLength}, wantHeader: fmt.Sprintf("characters 0–%d of %d", MaxMaxLength, total), wantNext: MaxMaxLength},
		{name: "slice from an offset", args: map[string]any{"url": u, "start_index": 1234, "max_length": 100}, wantHeader: fmt.Sprintf("characters 1234–1334 of %d", total), wantNext: 1334},
		{name: "last slice", args: map[string]any{"url": u, "start_index": total - 10}, wantHeader: fmt.Sprintf("characters %d–%d of %d", total-10, total, total)},
		{name: "over the cap", args: map[string]any{"url": u, "max_length": MaxMaxLength + 1}, wantErr: fmt.Sprintf("max_length must be between 1 and %d, got %d", MaxMaxLength, MaxMaxLength+1)},
		{name: "zero length", args: map[string]any{"url": u, "max_length": 0}, wantErr: fmt.Sprintf("max_length must be between 1 and %d, got 0", MaxMaxLength)},
		{name: "negative start", args: map[string]any{"url": u, "start_index": -1}, wantErr: "start_index must be 0 or more, got -1"},
		{name: "start past the end", args: map[string]any{"url": u, "start_index": total}, wantErr: fmt.Sprintf("start_index %d is past the end of the page (%d characters)", total, total)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, tl, tool.Scope{}, tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tc.wantHeader) {
				t.Errorf("answer lacks header %q:\n%.300s", tc.wantHeader, got)
			}
			next := 0
			if m := moreHint.FindStringSubmatch(got); m != nil {
				fmt.Sscan(m[1], &next)
			}
			if next != tc.wantNext {
				t.Errorf("next start_index hint = %d, want %d", next, tc.wantNext)
			}
		})
	}

	t.Run("paging reassembles the page from one fetch", func(t *testing.T) {
		before := hits.get("/long")
		s := tool.Scope{ConversationID: "paging"}
		var got strings.Builder
		const slice = MaxMaxLength - 500 // not a divisor of the page
		for start, calls := 0, 0; ; calls++ {
			if calls > total/slice+1 {
				t.Fatal("paging did not end")
			}
			out, err := call(t, tl, s, map[string]any{"url": u, "start_index": start, "max_length": slice})
			if err != nil {
				t.Fatal(err)
			}
			body := out[strings.Index(out, "\n\n")+2:]
			m := moreHint.FindStringSubmatch(body)
			if m == nil {
				got.WriteString(body)
				break
			}
			got.WriteString(strings.TrimSuffix(body, "\n\n"+m[0]))
			fmt.Sscan(m[1], &start)
		}
		if diff := cmp.Diff(text, got.String()); diff != "" {
			t.Errorf("pages do not reassemble the text (-want +got):\n%.2000s", diff)
		}
		if n := hits.get("/long") - before; n != 1 {
			t.Errorf("server was asked %d times while paging, want 1 (cached)", n)
		}
	})
}

// blockingTransport refuses every request the way the guarded client does.
type blockingTransport struct{}

func (blockingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("blocked: address not allowed")
}

func TestFetchClientErrors(t *testing.T) {
	srv, _ := serve(t, map[string]page{"/ok": {contentType: "text/plain", body: []byte("fine")}})
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data?token=hunter2", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	guardedRedirects := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Hostname() == "169.254.169.254" {
			return errors.New("blocked: address not allowed")
		}
		return nil
	}}
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name    string
		client  *http.Client
		url     string
		want    string
		isInfra bool
	}{
		{"guarded refusal", &http.Client{Transport: blockingTransport{}}, "http://10.0.0.1/admin?api_key=s3cret#frag", "blocked: address not allowed (fetch http://10.0.0.1/admin)", false},
		{"refused redirect", guardedRedirects, redirector.URL + "/go?session=abc123", "blocked: address not allowed (fetch " + redirector.URL + "/go)", false},
		{"connection refused", srv.Client(), closedURL + "/x?token=zzz", "fetch " + closedURL + "/x: dial tcp", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(t, FetchTool(Config{Client: tc.client}), tool.Scope{}, map[string]any{"url": tc.url})
			if err == nil {
				t.Fatal("fetch_url succeeded, want an error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.want) {
				t.Errorf("error = %q, want it to start with %q", msg, tc.want)
			}
			for _, secret := range []string{"s3cret", "abc123", "hunter2", "zzz", "token=", "frag", "\n"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q echoes %q", msg, secret)
				}
			}
			if tool.IsInfra(err) != tc.isInfra {
				t.Errorf("IsInfra = %v, want %v", tool.IsInfra(err), tc.isInfra)
			}
		})
	}
}

func TestFetchFollowsRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new?ticket=t0ps3cret", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "moved content")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	got, err := call(t, FetchTool(Config{Client: srv.Client()}), tool.Scope{}, map[string]any{"url": srv.URL + "/old"})
	if err != nil {
		t.Fatal(err)
	}
	want := "URL: " + srv.URL + "/old\nRedirected to: " + srv.URL + "/new\nContent (text): characters 0–13 of 13\n\nmoved content"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer mismatch (-want +got):\n%s", diff)
	}
}

func TestFetchCancelledTurnIsInfra(t *testing.T) {
	srv, _ := serve(t, map[string]page{"/ok": {contentType: "text/plain", body: []byte("fine")}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := FetchTool(Config{Client: srv.Client()}).Run(ctx, tool.Scope{}, json.RawMessage(`{"url":"`+srv.URL+`/ok"}`))
	if !tool.IsInfra(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want an infrastructure error wrapping context.Canceled", err)
	}
}

// httpClientForTest is a plain client for loopback servers.
var httpClientForTest = http.Client{}

func TestFetchCacheIsPerConversation(t *testing.T) {
	srv, hits := serve(t, map[string]page{"/p": {contentType: "text/plain", body: []byte("cached text")}})
	tl := FetchTool(Config{Client: srv.Client()})
	steps := []struct {
		org, conv string
		wantHits  int64
	}{
		{"o1", "c1", 1},
		{"o1", "c1", 1}, // same conversation: from the cache
		{"o1", "c2", 2}, // another conversation fetches again
		{"o2", "c1", 3}, // another organisation too
	}
	for i, st := range steps {
		if _, err := call(t, tl, tool.Scope{OrgID: st.org, ConversationID: st.conv}, map[string]any{"url": srv.URL + "/p"}); err != nil {
			t.Fatal(err)
		}
		if got := hits.get("/p"); got != st.wantHits {
			t.Errorf("step %d (%s/%s): server hits = %d, want %d", i, st.org, st.conv, got, st.wantHits)
		}
	}
}
