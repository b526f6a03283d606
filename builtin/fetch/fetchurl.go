package fetch

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/builtin/webrules"
	"github.com/quiverhq/quiver/tool"
)

//go:embed fetch_url.md
var fetchDescription string

// fetchRules is fetch_url's own prompt fragment: when to read a page.
//
//go:embed fetch_url_rules.md
var fetchRules string

// fetchInput is fetch_url's arguments.
type fetchInput struct {
	URL        string `json:"url" jsonschema:"http(s) URL of the page"`
	MaxLength  *int   `json:"max_length,omitempty" jsonschema:"characters to return"`
	StartIndex int    `json:"start_index,omitempty" jsonschema:"character to start from, as the last answer says"`
}

// FetchTool returns fetch_url: it GETs a page through cfg.Client (after the
// Crawl4AI sidecar when one is configured) and answers with one slice of its
// text, HTML converted to Markdown: at most max_length characters
// (DefaultMaxLength, at most MaxMaxLength) from start_index, under a header
// of at most MaxHeaderChars that ends, when text is left, with the
// start_index that continues. Failures, including the guarded client's
// "blocked: …" refusals, reach the model as one-line errors with no query
// string. Turns whose model provider is in cfg.ExcludeProviders do not get
// the tool. It panics when cfg.Check fails. The tool is safe for concurrent
// use; its page cache is its own.
func FetchTool(cfg Config) *tool.Tool {
	f := newFetcher(cfg)
	return tool.New(tool.Spec{
		Name:        "fetch_url",
		Family:      "url_fetch",
		Macros:      []string{"url_fetch_tool", "url_metadata_tool"},
		Description: fetchDescription,
		Access:      tool.Read,
		Requires:    f.requires,
		// A fetched page is untrusted: the shared paragraph says so.
		Fragments: []string{webrules.Untrusted(), strings.TrimSpace(fetchRules)},
		// Output is bounded by max_length and already paged by start_index;
		// storing it again would page a page. (An answer fits dispatch's
		// default threshold anyway: MaxMaxLength + MaxHeaderChars.)
		Unstored: true,
		Limits: []tool.Limit{
			{Name: "max_length_default", Value: DefaultMaxLength},
			{Name: "max_length_max", Value: MaxMaxLength},
			{Name: "body_bytes", Value: int(f.cfg.MaxBodyBytes)},
		},
		Tune: tuneFetch,
	}, f.fetchURL)
}

// tuneFetch writes the slice bounds into max_length's description from the
// constants, so the model reads the limits the handler enforces. The bounds
// are checked by the handler, whose error says them plainly, rather than as
// schema keywords.
func tuneFetch(s *jsonschema.Schema) {
	s.Properties["max_length"].Description = fmt.Sprintf("characters to return, at most %d (default %d)", MaxMaxLength, DefaultMaxLength)
}

func (f *fetcher) fetchURL(ctx context.Context, s tool.Scope, in fetchInput) (string, error) {
	maxLen := DefaultMaxLength
	if in.MaxLength != nil {
		maxLen = *in.MaxLength
	}
	if maxLen < 1 || maxLen > MaxMaxLength {
		return "", fmt.Errorf("max_length must be between 1 and %d, got %d", MaxMaxLength, maxLen)
	}
	if in.StartIndex < 0 {
		return "", fmt.Errorf("start_index must be 0 or more, got %d", in.StartIndex)
	}
	u, err := parsePageURL(in.URL)
	if err != nil {
		return "", err
	}
	d, err := f.document(ctx, s, u)
	if err != nil {
		return "", err
	}
	return render(d, u.String(), in.StartIndex, maxLen)
}

// render answers with characters [start, start+max) of d.Text under a
// header that says where the slice is and how to read on. What it adds to
// the slice is at most MaxHeaderChars (d.Title is clipped when the page is
// read).
func render(d document, requested string, start, max int) (string, error) {
	total := utf8.RuneCountInString(d.Text)
	if total == 0 {
		return "", fmt.Errorf("the page at %s has no readable text", requested)
	}
	if start >= total {
		return "", fmt.Errorf("start_index %d is past the end of the page (%d characters)", start, total)
	}
	runes := []rune(d.Text)
	end := min(start+max, total)
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", clip(requested, maxURLChars))
	if d.URL != requested {
		fmt.Fprintf(&b, "Redirected to: %s\n", clip(redactString(d.URL), maxURLChars))
	}
	if d.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", d.Title)
	}
	fmt.Fprintf(&b, "Content (%s): characters %d–%d of %d", d.Format, start, end, total)
	if d.Truncated {
		b.WriteString("; the page was too long and was cut before conversion")
	}
	b.WriteString("\n\n")
	b.WriteString(string(runes[start:end]))
	if end < total {
		fmt.Fprintf(&b, "\n\n[More: call fetch_url again with start_index=%d to read on.]", end)
	}
	return b.String(), nil
}
