package web

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Count bounds and caps on what one result may show.
const (
	DefaultCount = 5
	MaxCount     = 20
	MaxTitle     = 200
	MaxSnippet   = 400
)

// clampCount bounds n to 1–MaxCount; zero or less means DefaultCount.
func clampCount(n int) int {
	switch {
	case n <= 0:
		return DefaultCount
	case n > MaxCount:
		return MaxCount
	}
	return n
}

// normalise cleans results for the model: white space collapsed, titles
// and snippets cut, links that are not plain http(s) or that carry
// credentials dropped, repeats of a URL dropped, at most n kept. A result
// without a URL is kept only when it has a snippet (an engine's answer).
func normalise(in []Result, n int) []Result {
	out := make([]Result, 0, min(len(in), n))
	seen := map[string]bool{}
	for _, r := range in {
		if len(out) == n {
			break
		}
		r.Title = cut(r.Title, MaxTitle)
		r.Snippet = cut(r.Snippet, MaxSnippet)
		u, ok := cleanURL(r.URL)
		if !ok || (u == "" && r.Snippet == "") || (u != "" && seen[u]) {
			continue
		}
		if r.Title == "" {
			r.Title = u
		}
		r.URL = u
		seen[u] = true
		out = append(out, r)
	}
	return out
}

// cleanURL accepts absolute http and https URLs without user info, and the
// empty string.
func cleanURL(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", true
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Host == "" {
		return "", false
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return "", false
	}
	return u.String(), true
}

// cut collapses white space and shortens s to max runes, marking a cut
// with an ellipsis.
func cut(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:max-1])) + "…"
}
