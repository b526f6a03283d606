package fetch

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/quiverhq/quiver/tool"
)

// largePage generates a deterministic article page of at least minBytes:
// the saved article's chrome around many sections of paragraphs, lists,
// links and tables, as a long documentation page has.
func largePage(tb testing.TB, minBytes int) []byte {
	tb.Helper()
	art := mustRead(tb, "article.html")
	cut := bytes.Index(art, []byte("</article>"))
	var sec bytes.Buffer
	for i := 0; sec.Len() < minBytes; i++ {
		fmt.Fprintf(&sec, "<h2>Section %d: station records</h2>\n", i)
		for j := range 4 {
			fmt.Fprintf(&sec, "<p>Paragraph %d.%d. The keeper of station %d wound the clockwork at <em>%02d:00</em>, trimmed the wick and noted the <a href=\"/records/%d/%d\">weather</a>. A ship passed to the north-east, showing a green light, and the watch book records the wind as moderate from the south-west.</p>\n", i, j, i, j*4, i, j)
		}
		fmt.Fprintf(&sec, "<ul><li>Lens order %d</li><li>Range %d miles</li><li>Lit in %d</li></ul>\n", i%4+1, 10+i%20, 1820+i%80)
		fmt.Fprintf(&sec, "<table><tr><th>Year</th><th>Nights</th></tr><tr><td>%d</td><td>%d</td></tr></table>\n", 1850+i%60, 300+i%65)
	}
	out := append([]byte{}, art[:cut]...)
	out = append(out, sec.Bytes()...)
	return append(out, art[cut:]...)
}

// BenchmarkConvertLargePage measures HTML-to-Markdown throughput (charset
// detection, readability extraction and conversion) on a ≥ 500 KB page;
// MB/s is per input byte.
func BenchmarkConvertLargePage(b *testing.B) {
	body := largePage(b, 600<<10)
	f := newFetcher(Config{Client: http.DefaultClient})
	u, _ := url.Parse("https://coastal.example/records")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := f.convert(context.Background(), body, "text/html; charset=utf-8", u)
		if err != nil || len(d.Text) < 100<<10 {
			b.Fatalf("convert: %d characters, %v", len(d.Text), err)
		}
	}
}

// BenchmarkFetchURLLargePage measures a whole fetch_url call on the same
// page from a loopback server, with the cache off so every call converts.
func BenchmarkFetchURLLargePage(b *testing.B) {
	body := largePage(b, 600<<10)
	srv, _ := serve(b, map[string]page{"/big": {contentType: "text/html; charset=utf-8", body: body}})
	tl := FetchTool(Config{Client: srv.Client(), CacheEntries: -1})
	args := map[string]any{"url": srv.URL + "/big", "max_length": MaxMaxLength}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(b, tl, tool.Scope{}, args); err != nil {
			b.Fatal(err)
		}
	}
}
