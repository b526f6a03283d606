package web

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// maxBlocks caps the result blocks read from one DuckDuckGo page.
const maxBlocks = 50

// ParseDuckDuckGo reads a DuckDuckGo HTML result page. It returns the
// organic results (ads dropped, /l/?uddg= click wrappers unwrapped), an
// empty slice for a genuine no-results page, a Challenged *EngineError for
// an anomaly or challenge page, and a Malformed one when the page holds
// neither usable results nor a no-results marker. It never panics.
func ParseDuckDuckGo(page []byte) ([]Result, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return nil, engineErr(Malformed, "parse html: %w", err)
	}
	var (
		blocks    []*html.Node
		noResults bool
		challenge bool
	)
	walk(doc, func(n *html.Node) bool {
		switch {
		case hasClassPrefix(n, "anomaly-modal") || attr(n, "id") == "challenge-form":
			challenge = true
		case hasClass(n, "no-results") || hasClass(n, "result--no-result"):
			noResults = true
			return false
		case hasClass(n, "result") && n.Data == "div":
			if !hasClass(n, "result--ad") && len(blocks) < maxBlocks {
				blocks = append(blocks, n)
			}
			return false
		}
		return true
	})
	if challenge {
		return nil, engineErr(Challenged, "anomaly page")
	}
	out := []Result{}
	for _, b := range blocks {
		if r, ok := ddgBlock(b); ok {
			out = append(out, r)
		}
	}
	switch {
	case len(out) > 0:
		return out, nil
	case noResults:
		return out, nil
	case len(blocks) > 0:
		return nil, engineErr(Malformed, "%d result blocks, none usable", len(blocks))
	}
	return nil, engineErr(Malformed, "no results and no no-results marker")
}

// ddgBlock reads one result block: the result__a link gives title and URL,
// result__snippet the snippet.
func ddgBlock(b *html.Node) (Result, bool) {
	var title, href, snippet string
	walk(b, func(n *html.Node) bool {
		switch {
		case n.Type == html.ElementNode && n.Data == "a" && hasClass(n, "result__a") && href == "":
			title, href = text(n), attr(n, "href")
			return false
		case hasClass(n, "result__snippet") && snippet == "":
			snippet = text(n)
			return false
		}
		return true
	})
	u, ok := unwrapDDG(href)
	if ok {
		u, ok = cleanURL(u)
	}
	if !ok || u == "" || title == "" {
		return Result{}, false
	}
	return Result{Title: title, URL: u, Snippet: snippet, Source: "duckduckgo"}, true
}

// unwrapDDG turns a DuckDuckGo click wrapper (//duckduckgo.com/l/?uddg=…)
// into its target, once. A wrapper around another wrapper is refused.
func unwrapDDG(href string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return "", false
	}
	if isDDGWrapper(u) {
		target := u.Query().Get("uddg")
		if target == "" {
			return "", false
		}
		inner, err := url.Parse(target)
		if err != nil || isDDGWrapper(inner) {
			return "", false
		}
		return target, true
	}
	return u.String(), true
}

func isDDGWrapper(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	return (host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com") || host == "") &&
		strings.HasPrefix(u.Path, "/l/")
}

// walk visits n and its descendants in document order; visit returning
// false skips a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if !visit(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

func attr(n *html.Node, key string) string {
	if n.Type != html.ElementNode {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func hasClassPrefix(n *html.Node, prefix string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// text returns n's text content with runs of white space collapsed.
func text(n *html.Node) string {
	var sb strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			sb.WriteString(c.Data)
		}
		return true
	})
	return strings.Join(strings.Fields(sb.String()), " ")
}

// plainText drops the markup engines put in titles and snippets (Brave's
// <strong> highlights) and decodes entities.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	z := html.NewTokenizer(strings.NewReader(s))
	var sb strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			return sb.String()
		case html.TextToken:
			sb.Write(z.Text())
		}
	}
}
