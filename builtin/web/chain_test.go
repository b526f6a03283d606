package web

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// summary is what a chain test compares: who served, who was passed over,
// how many results, and which fakes were asked.
type summary struct {
	Engine   string
	Failures []Failure
	Results  int
	Err      string
	Hits     map[string]int
}

func (f *fakes) hits() map[string]int {
	out := map[string]int{}
	for name, fk := range map[string]*fake{"brave": f.brave, "searxng": f.searx, "duckduckgo": f.ddg, "iask": f.iask} {
		if h, _ := fk.counts(); h > 0 {
			out[name] = h
		}
	}
	return out
}

func summarise(f *fakes, o Outcome, err error) summary {
	s := summary{Engine: o.Engine, Failures: o.Failures, Results: len(o.Results), Hits: f.hits()}
	if err != nil {
		s.Err = err.Error()
	}
	return s
}

func TestChainOrderAndHandOver(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t testing.TB, f *fakes, cfg *Config)
		q     Query
		want  summary
	}{
		{
			name: "brave answers first",
			q:    Query{Text: "go"},
			want: summary{Engine: "brave", Results: 2, Hits: map[string]int{"brave": 1}},
		},
		{
			name:  "no brave key starts at searxng",
			setup: func(_ testing.TB, _ *fakes, c *Config) { c.Brave.APIKey = "" },
			q:     Query{Text: "go"},
			want:  summary{Engine: "searxng", Results: 2, Hits: map[string]int{"searxng": 1}},
		},
		{
			name: "duckduckgo alone by default",
			setup: func(_ testing.TB, _ *fakes, c *Config) {
				*c = Config{Client: c.Client, DuckDuckGo: c.DuckDuckGo, Now: c.Now}
			},
			q:    Query{Text: "go"},
			want: summary{Engine: "duckduckgo", Results: 2, Hits: map[string]int{"duckduckgo": 1}},
		},
		{
			name:  "rate limited brave hands over",
			setup: func(_ testing.TB, f *fakes, _ *Config) { f.brave.set(rateLimited("10")) },
			q:     Query{Text: "go"},
			want: summary{Engine: "searxng", Results: 2, Failures: []Failure{{"brave", RateLimited}},
				Hits: map[string]int{"brave": 1, "searxng": 1}},
		},
		{
			name:  "unhealthy searxng is not asked",
			setup: func(_ testing.TB, f *fakes, c *Config) { c.Brave.APIKey = ""; f.searx.setHealth(503) },
			q:     Query{Text: "go"},
			want: summary{Engine: "duckduckgo", Results: 2, Failures: []Failure{{"searxng", Unavailable}},
				Hits: map[string]int{"duckduckgo": 1}},
		},
		{
			name: "empty, error and anomaly hand over to iask",
			setup: func(t testing.TB, f *fakes, _ *Config) {
				f.brave.set(reply{body: `{"type":"search","web":{"type":"search","results":[]}}`})
				f.searx.set(status(500))
				f.ddg.set(ok(t, "ddg_anomaly.html"))
			},
			q: Query{Text: "go"},
			want: summary{Engine: "iask", Results: 2, // the answer cites its first source, which is then a repeat
				Failures: []Failure{{"brave", Empty}, {"searxng", Failed}, {"duckduckgo", Challenged}},
				Hits:     map[string]int{"brave": 1, "searxng": 1, "duckduckgo": 1, "iask": 1}},
		},
		{
			name: "timeout hands over",
			setup: func(_ testing.TB, f *fakes, c *Config) {
				c.Timeout = 20 * time.Millisecond
				f.brave.set(reply{hang: true})
			},
			q: Query{Text: "go"},
			want: summary{Engine: "searxng", Results: 2, Failures: []Failure{{"brave", TimedOut}},
				Hits: map[string]int{"brave": 1, "searxng": 1}},
		},
		{
			name: "every engine empty is no results, not an error",
			setup: func(t testing.TB, f *fakes, c *Config) {
				c.IAsk = IAskConfig{}
				f.brave.set(reply{body: `{"type":"search"}`})
				f.searx.set(ok(t, "searxng_empty.json"))
				f.ddg.set(ok(t, "ddg_noresults.html"))
			},
			q: Query{Text: "zzqqxx"},
			want: summary{Failures: []Failure{{"brave", Empty}, {"searxng", Empty}, {"duckduckgo", Empty}},
				Hits: map[string]int{"brave": 1, "searxng": 1, "duckduckgo": 1}},
		},
		{
			name: "every engine failing is unavailable",
			setup: func(_ testing.TB, f *fakes, _ *Config) {
				f.brave.set(status(500))
				f.searx.set(rateLimited("5"))
				f.ddg.set(status(403))
				f.iask.set(reply{body: "not json"})
			},
			q: Query{Text: "go"},
			want: summary{
				Failures: []Failure{{"brave", Failed}, {"searxng", RateLimited}, {"duckduckgo", Challenged}, {"iask", Malformed}},
				Err:      "web search is unavailable right now (brave: error; searxng: rate limited; duckduckgo: bot check; iask: unreadable answer)",
				Hits:     map[string]int{"brave": 1, "searxng": 1, "duckduckgo": 1, "iask": 1}},
		},
		{
			name: "image skips engines without images",
			setup: func(t testing.TB, f *fakes, _ *Config) {
				f.brave.set(rateLimited("5"))
				f.searx.set(ok(t, "searxng_empty.json"))
			},
			q: Query{Text: "gopher", Category: Image},
			want: summary{Failures: []Failure{{"brave", RateLimited}, {"searxng", Empty}},
				Hits: map[string]int{"brave": 1, "searxng": 1}},
		},
		{
			name:  "papers go straight to searxng",
			q:     Query{Text: "generics", Category: Papers},
			want:  summary{Engine: "searxng", Results: 2, Hits: map[string]int{"searxng": 1}},
			setup: func(_ testing.TB, _ *fakes, _ *Config) {},
		},
		{
			name:  "category nobody serves",
			setup: func(_ testing.TB, _ *fakes, c *Config) { c.SearXNG.BaseURL = "" },
			q:     Query{Text: "generics", Category: Music},
			want:  summary{Err: `web search: no engine serves category "music"`, Hits: map[string]int{}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes(t)
			cfg := f.config()
			if tc.setup != nil {
				tc.setup(t, f, &cfg)
			}
			o, err := New(cfg).Chain().Search(context.Background(), tc.q)
			if diff := cmp.Diff(tc.want, summarise(f, o, err)); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if err != nil && tc.want.Engine == "" && len(tc.want.Failures) == 4 && !errors.Is(err, ErrUnavailable) {
				t.Errorf("error %v does not wrap ErrUnavailable", err)
			}
		})
	}
}

// TestCooldown steps a fake clock through an engine's cooldown: skipped
// while it lasts, tried again after, Retry-After honoured over the default.
func TestCooldown(t *testing.T) {
	f := newFakes(t)
	cfg := f.config()
	cfg.Cooldown = time.Minute
	c := New(cfg).Chain()
	ctx := context.Background()
	steps := []struct {
		name      string
		reply     reply
		advance   time.Duration
		wantBy    string
		wantFails []Failure
		wantHits  int // brave's hits so far
	}{
		{"rate limited with Retry-After 30", rateLimited("30"), 0, "searxng", []Failure{{"brave", RateLimited}}, 1},
		{"skipped during Retry-After", ok(t, "brave_web.json"), 29 * time.Second, "searxng", []Failure{{"brave", CoolingDown}}, 1},
		{"tried after Retry-After; fails without one", status(500), 2 * time.Second, "searxng", []Failure{{"brave", Failed}}, 2},
		{"default cooldown still running", ok(t, "brave_web.json"), 59 * time.Second, "searxng", []Failure{{"brave", CoolingDown}}, 2},
		{"default cooldown over", ok(t, "brave_web.json"), 2 * time.Second, "brave", nil, 3},
	}
	for _, st := range steps {
		f.brave.set(st.reply)
		f.clock.Advance(st.advance)
		o, err := c.Search(ctx, Query{Text: "go"})
		hits, _ := f.brave.counts()
		if err != nil || o.Engine != st.wantBy || !cmp.Equal(o.Failures, st.wantFails) || hits != st.wantHits {
			t.Errorf("%s: served by %q, failures %v, brave hits %d, err %v; want %q, %v, %d",
				st.name, o.Engine, o.Failures, hits, err, st.wantBy, st.wantFails, st.wantHits)
		}
	}
}

// TestCooldownCap checks that a huge Retry-After benches an engine for at
// most MaxCooldown.
func TestCooldownCap(t *testing.T) {
	f := newFakes(t)
	c := New(f.config()).Chain()
	f.brave.set(rateLimited("999999"))
	c.Search(context.Background(), Query{Text: "go"})
	f.brave.set(ok(t, "brave_web.json"))
	f.clock.Advance(MaxCooldown)
	if o, _ := c.Search(context.Background(), Query{Text: "go"}); o.Engine != "brave" {
		t.Errorf("after MaxCooldown served by %q, want brave", o.Engine)
	}
}

// TestBraveResetCooldown steps a fake clock through the cooldowns Brave's
// rate-limit headers ask for when it sends no Retry-After: the per-second
// window's reset, then an exhausted month, capped at MaxCooldown.
func TestBraveResetCooldown(t *testing.T) {
	f := newFakes(t)
	c := New(f.config()).Chain()
	steps := []struct {
		name      string
		reply     reply
		advance   time.Duration
		wantBy    string
		wantFails []Failure
		wantHits  int // brave's hits so far
	}{
		{"per-second window exhausted, reset in 30 s", braveLimited("0, 9000", "30, 1419704"), 0, "searxng", []Failure{{"brave", RateLimited}}, 1},
		{"skipped until the reset", ok(t, "brave_web.json"), 29 * time.Second, "searxng", []Failure{{"brave", CoolingDown}}, 1},
		{"asked again after it", ok(t, "brave_web.json"), time.Second, "brave", nil, 2},
		{"month exhausted", braveLimited("1, 0", "1, 1419704"), 0, "searxng", []Failure{{"brave", RateLimited}}, 3},
		{"skipped for MaxCooldown", ok(t, "brave_web.json"), MaxCooldown - time.Second, "searxng", []Failure{{"brave", CoolingDown}}, 3},
		{"asked again after MaxCooldown", ok(t, "brave_web.json"), time.Second, "brave", nil, 4},
	}
	for _, st := range steps {
		f.brave.set(st.reply)
		f.clock.Advance(st.advance)
		o, err := c.Search(context.Background(), Query{Text: "go"})
		hits, _ := f.brave.counts()
		if err != nil || o.Engine != st.wantBy || !cmp.Equal(o.Failures, st.wantFails) || hits != st.wantHits {
			t.Errorf("%s: served by %q, failures %v, brave hits %d, err %v; want %q, %v, %d",
				st.name, o.Engine, o.Failures, hits, err, st.wantBy, st.wantFails, st.wantHits)
		}
	}
}

// TestCancelledTurn checks that a cancelled turn returns the context's
// error and benches no engine.
func TestCancelledTurn(t *testing.T) {
	f := newFakes(t)
	c := New(f.config()).Chain()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Search(ctx, Query{Text: "go"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if o, err := c.Search(context.Background(), Query{Text: "go"}); err != nil || o.Engine != "brave" {
		t.Errorf("after a cancelled turn served by %q (%v), want brave", o.Engine, err)
	}
}

func TestCategories(t *testing.T) {
	tests := []struct {
		name           string
		setup          func(f *fakes, c *Config)
		wantConfigured []string
		wantNow        []string
	}{
		{"everything", nil, AllCategories(), AllCategories()},
		{"brave and duckduckgo", func(_ *fakes, c *Config) { c.SearXNG.BaseURL = "" },
			[]string{Text, Image, Video, News}, []string{Text, Image, Video, News}},
		{"duckduckgo only", func(_ *fakes, c *Config) { *c = Config{Client: c.Client, DuckDuckGo: c.DuckDuckGo} },
			[]string{Text}, []string{Text}},
		{"searxng unhealthy", func(f *fakes, c *Config) { c.Brave.APIKey = ""; f.searx.setHealth(500) },
			AllCategories(), []string{Text}},
		{"brave cooling down", func(f *fakes, c *Config) { c.SearXNG.BaseURL = ""; f.brave.set(rateLimited("60")) },
			[]string{Text, Image, Video, News}, []string{Text}},
		{"nothing configured still lists text", func(_ *fakes, c *Config) { *c = Config{DuckDuckGo: DuckDuckGoConfig{Disabled: true}} },
			[]string{Text}, []string{Text}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes(t)
			cfg := f.config()
			if tc.setup != nil {
				tc.setup(f, &cfg)
			}
			c := New(cfg).Chain()
			c.Search(context.Background(), Query{Text: "warm up"})
			if diff := cmp.Diff(tc.wantConfigured, c.Configured()); diff != "" {
				t.Errorf("Configured (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNow, c.Categories(context.Background())); diff != "" {
				t.Errorf("Categories (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountBounds(t *testing.T) {
	tests := []struct {
		name      string
		count     int
		wantParam string
	}{
		{"zero is the default", 0, "5"},
		{"negative is the default", -3, "5"},
		{"one", 1, "1"},
		{"twenty", 20, "20"},
		{"over the cap", 500, "20"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakes(t)
			New(f.config()).Chain().Search(context.Background(), Query{Text: "go", Count: tc.count})
			u, _ := f.brave.last()
			if !strings.Contains(u, "count="+tc.wantParam+"&") {
				t.Errorf("brave asked %q, want count=%s", u, tc.wantParam)
			}
		})
	}
}

func TestNormalise(t *testing.T) {
	in := []Result{
		{Title: "  A\n title ", URL: "https://a.example/x"},
		{Title: "dup", URL: "https://a.example/x"},
		{Title: "creds", URL: "https://user:pw@b.example/"},
		{Title: "script", URL: "javascript:alert(1)"},
		{Title: "relative", URL: "/local"},
		{Title: "", URL: "http://c.example/", Snippet: strings.Repeat("é", MaxSnippet+10)},
		{Title: "answer without url", Snippet: "an answer"},
		{Title: "no url no snippet"},
		{Title: "over count", URL: "https://d.example/"},
	}
	want := []Result{
		{Title: "A title", URL: "https://a.example/x"},
		{Title: "http://c.example/", URL: "http://c.example/", Snippet: strings.Repeat("é", MaxSnippet-1) + "…"},
		{Title: "answer without url", Snippet: "an answer"},
	}
	if diff := cmp.Diff(want, normalise(in, 3)); diff != "" {
		t.Errorf("normalise (-want +got):\n%s", diff)
	}
}
