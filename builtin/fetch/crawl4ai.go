package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// crawl4AIRequest is the body of Crawl4AI's POST /md: the page, the
// content filter ("fit" prunes boilerplate), an optional query for the
// bm25/llm filters, and a cache-bust revision.
type crawl4AIRequest struct {
	URL    string  `json:"url"`
	Filter string  `json:"f"`
	Query  *string `json:"q"`
	Cache  string  `json:"c"`
}

// crawl4AIResponse is what POST /md answers.
type crawl4AIResponse struct {
	URL      string `json:"url"`
	Markdown string `json:"markdown"`
	Success  bool   `json:"success"`
}

// crawl4AI asks the sidecar for the page at u as Markdown. Any failure
// (transport, status, a body that does not decode, success false, empty
// Markdown) is an error, and the caller fetches directly instead.
func (f *fetcher) crawl4AI(ctx context.Context, u *url.URL) (document, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Crawl4AITimeout)
	defer cancel()
	body, err := json.Marshal(crawl4AIRequest{URL: u.String(), Filter: "fit", Cache: "0"})
	if err != nil {
		return document{}, fmt.Errorf("crawl4ai: %w", err)
	}
	endpoint := strings.TrimRight(f.cfg.Crawl4AIURL, "/") + "/md"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return document{}, fmt.Errorf("crawl4ai: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if f.cfg.Crawl4AIToken != "" {
		req.Header.Set("Authorization", "Bearer "+f.cfg.Crawl4AIToken)
	}
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		return document{}, fmt.Errorf("crawl4ai: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return document{}, fmt.Errorf("crawl4ai: HTTP %s", resp.Status)
	}
	var out crawl4AIResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, f.cfg.MaxBodyBytes)).Decode(&out); err != nil {
		return document{}, fmt.Errorf("crawl4ai: decode answer: %w", err)
	}
	md := tidy(out.Markdown)
	if !out.Success || md == "" {
		return document{}, errors.New("crawl4ai: no markdown for the page")
	}
	return document{URL: u.String(), Title: markdownTitle(md), Format: "markdown", Text: md}, nil
}

// markdownTitle returns the text of the first level-one heading, which is
// the page title in Crawl4AI's output; "" when there is none near the top.
func markdownTitle(md string) string {
	for i, line := range strings.SplitN(md, "\n", 20) {
		if t, ok := strings.CutPrefix(line, "# "); ok && i < 19 {
			return oneLine(t)
		}
	}
	return ""
}
