package web

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParseDuckDuckGo checks that the DuckDuckGo parser never panics, that
// it either returns results or a classified *EngineError, and that every
// result it returns has a title and a URL. Seeds are in
// testdata/fuzz/FuzzParseDuckDuckGo.
func FuzzParseDuckDuckGo(f *testing.F) {
	f.Fuzz(func(t *testing.T, page []byte) {
		res, err := ParseDuckDuckGo(page)
		if err != nil {
			var ee *EngineError
			if !errors.As(err, &ee) || res != nil {
				t.Fatalf("ParseDuckDuckGo error %v (results %v), want an *EngineError and no results", err, res)
			}
			return
		}
		if len(res) > maxBlocks {
			t.Fatalf("%d results, want at most %d", len(res), maxBlocks)
		}
		for _, r := range res {
			if r.Title == "" || r.URL == "" {
				t.Fatalf("result without title or URL: %+v", r)
			}
		}
		normalise(res, MaxCount)
	})
}

// FuzzDecodeSearXNG checks that SearXNG decoding never panics and that a
// failure is always Malformed. Seeds are in testdata/fuzz/FuzzDecodeSearXNG.
func FuzzDecodeSearXNG(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := decodeSearXNG(body)
		if err != nil {
			var ee *EngineError
			if !errors.As(err, &ee) || ee.Kind != Malformed {
				t.Fatalf("decodeSearXNG error %v, want Malformed", err)
			}
			return
		}
		for _, r := range normalise(res, MaxCount) {
			if !utf8.ValidString(r.Title) && r.Title == "" {
				t.Fatalf("bad title %q", r.Title)
			}
		}
	})
}
