package fetch

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/quiverhq/quiver/builtin/webrules"
	"github.com/quiverhq/quiver/tool"
	"github.com/quiverhq/quiver/turn"
)

//go:embed research_web.md
var researchDescription string

// researchRules is research_web's own prompt fragment: when to prefer it
// over web_search.
//
//go:embed research_web_rules.md
var researchRules string

// Limits of research_web.
const (
	// MaxQuestionChars bounds the question.
	MaxQuestionChars = 500
	// pageExcerptChars bounds the passages taken from one page.
	pageExcerptChars = 2000
	// snippetChars bounds a listed search snippet.
	snippetChars = 200
)

// Hit is one search result.
type Hit struct {
	Title   string
	URL     string
	Snippet string
}

// Searcher finds pages for a query, at most count hits, best first. The
// web_search engine chain satisfies it. Implementations must be safe for
// concurrent use; an error marked tool.Infra is passed on as such.
type Searcher interface {
	Search(ctx context.Context, query string, count int) ([]Hit, error)
}

// GatedSearcher is a Searcher that some turns may not use (web search
// disabled in config): Unavailable returns why not, or "" when the turn
// may. research_web is left out of such a turn with that reason.
type GatedSearcher interface {
	Searcher
	Unavailable(turn.Selection) string
}

// researchInput is research_web's arguments.
type researchInput struct {
	Question string `json:"question" jsonschema:"what to find out, as a full question"`
}

// ResearchTool returns research_web: it searches with searcher, reads up to
// cfg.PagesPerCall of the hits (never more than cfg.PagesPerTurn in one
// turn) through the same path as fetch_url, and answers with the passages
// of each page that share the most terms with the question, each under its
// URL. Pages that fail are listed as skipped. Turns whose model provider is
// in cfg.ExcludeProviders do not get the tool. It panics when cfg.Check fails
// or searcher is nil. The tool is safe for concurrent use.
func ResearchTool(cfg Config, searcher Searcher) *tool.Tool {
	if searcher == nil {
		panic("fetch: ResearchTool needs a Searcher")
	}
	r := &researcher{f: newFetcher(cfg), search: searcher}
	r.quota = newTurnQuota(r.f.cfg.PagesPerTurn)
	return tool.New(tool.Spec{
		Name: "research_web",
		// Its own family: it both searches and reads pages, so allowing
		// web_search or url_fetch alone must not enable it.
		Family:      "research",
		Macros:      []string{"research_tool"},
		Description: researchDescription,
		Access:      tool.Read,
		Requires:    r.requires,
		// It searches the web, so the web_search switch gates it too.
		Switches:  []string{"web_search"},
		Fragments: []string{webrules.Queries(), webrules.Untrusted(), strings.TrimSpace(researchRules)},
		Limits: []tool.Limit{
			{Name: "pages_per_call", Value: r.f.cfg.PagesPerCall},
			{Name: "pages_per_turn", Value: r.f.cfg.PagesPerTurn},
			{Name: "question_chars", Value: MaxQuestionChars},
			{Name: "excerpt_chars_per_page", Value: pageExcerptChars},
		},
	}, r.research)
}

// requires leaves research_web out where fetch_url is (an excluded
// provider) and where its searcher cannot search.
func (r *researcher) requires(t turn.Selection) string {
	if reason := r.f.requires(t); reason != "" {
		return reason
	}
	if g, ok := r.search.(GatedSearcher); ok {
		if reason := g.Unavailable(t); reason != "" {
			return "it searches with web_search, and " + reason
		}
	}
	return ""
}

type researcher struct {
	f      *fetcher
	search Searcher
	quota  *turnQuota
}

// pageResult is one page research_web tried to read.
type pageResult struct {
	hit      Hit
	title    string
	passages []string
	err      error
}

func (r *researcher) research(ctx context.Context, s tool.Scope, in researchInput) (string, error) {
	q := strings.TrimSpace(in.Question)
	if q == "" {
		return "", errors.New("question is empty")
	}
	if n := utf8.RuneCountInString(q); n > MaxQuestionChars {
		return "", fmt.Errorf("question is %d characters, at most %d", n, MaxQuestionChars)
	}
	if r.quota.left(s.TurnID) == 0 {
		return "", r.quotaError()
	}
	hits, err := r.search.Search(ctx, q, r.f.cfg.PagesPerCall+3)
	if err != nil {
		return "", fmt.Errorf("research_web: search: %w", err)
	}
	hits = usableHits(hits)
	if len(hits) == 0 {
		return fmt.Sprintf("No search results for: %s", q), nil
	}
	n := r.quota.take(s.TurnID, min(r.f.cfg.PagesPerCall, len(hits)))
	if n == 0 {
		return "", r.quotaError()
	}
	pages, err := r.readPages(ctx, s, q, hits[:n])
	if err != nil {
		return "", err
	}
	return renderResearch(q, pages, hits[n:], r.quota.left(s.TurnID)), nil
}

func (r *researcher) quotaError() error {
	return fmt.Errorf("research_web has read its %d pages for this turn; answer from what you have", r.f.cfg.PagesPerTurn)
}

// readPages reads the hits concurrently and keeps their order. A page that
// fails is kept with its error; a cancelled turn fails the call.
func (r *researcher) readPages(ctx context.Context, s tool.Scope, q string, hits []Hit) ([]pageResult, error) {
	out := make([]pageResult, len(hits))
	var wg sync.WaitGroup
	for i, h := range hits {
		wg.Go(func() {
			out[i] = r.readPage(ctx, s, q, h)
		})
	}
	wg.Wait()
	for _, p := range out {
		if tool.IsInfra(p.err) {
			return nil, p.err
		}
	}
	return out, nil
}

func (r *researcher) readPage(ctx context.Context, s tool.Scope, q string, h Hit) pageResult {
	u, err := parsePageURL(h.URL)
	if err != nil {
		return pageResult{hit: h, err: err}
	}
	d, err := r.f.document(ctx, s, u)
	if err != nil {
		return pageResult{hit: h, err: err}
	}
	title := d.Title
	if title == "" {
		title = oneLine(h.Title)
	}
	return pageResult{hit: h, title: title, passages: excerpts(d.Text, q, pageExcerptChars)}
}

// usableHits drops hits without an http(s) URL and repeats of a URL.
func usableHits(hits []Hit) []Hit {
	seen := map[string]bool{}
	var out []Hit
	for _, h := range hits {
		u, err := parsePageURL(h.URL)
		if err != nil || seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		out = append(out, h)
	}
	return out
}

// renderResearch lays out the passages page by page, then the skipped pages
// and the hits left unread.
func renderResearch(q string, pages []pageResult, unread []Hit, left int) string {
	var b, skipped strings.Builder
	read := 0
	for _, p := range pages {
		if p.err != nil {
			fmt.Fprintf(&skipped, "- %s: %s\n", redactString(p.hit.URL), oneLine(p.err.Error()))
			continue
		}
		read++
		fmt.Fprintf(&b, "\n[%d] %s\nURL: %s\n\n%s\n", read, p.title, p.hit.URL, strings.Join(p.passages, "\n\n…\n\n"))
	}
	head := fmt.Sprintf("Research: %s\nRead %d of %d pages", q, read, len(pages))
	if left >= 0 {
		head += fmt.Sprintf(" (%d more may be read this turn)", left)
	}
	head += ". Cite the URL of each passage you use.\n"
	out := head + b.String()
	if skipped.Len() > 0 {
		out += "\nSkipped (could not be read):\n" + skipped.String()
	}
	if len(unread) > 0 {
		out += "\nOther results, not read:\n"
		for _, h := range unread {
			out += fmt.Sprintf("- %s — %s — %s\n", oneLine(h.Title), h.URL, clip(oneLine(h.Snippet), snippetChars))
		}
	}
	return strings.TrimRight(out, "\n")
}

// turnQuota counts pages read per turn. It remembers the most recent
// maxTurns turns only; an empty turn ID is never limited. It is safe for
// concurrent use.
type turnQuota struct {
	mu    sync.Mutex
	max   int
	used  map[string]int
	order []string
}

const maxTurns = 1024

func newTurnQuota(max int) *turnQuota { return &turnQuota{max: max, used: map[string]int{}} }

// left returns the pages turn may still read, or -1 when turn is "".
func (q *turnQuota) left(turn string) int {
	if turn == "" {
		return -1
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.max - q.used[turn]
}

// take reserves up to n pages for turn and returns how many it reserved.
func (q *turnQuota) take(turn string, n int) int {
	if turn == "" {
		return n
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.used[turn]; !ok {
		q.order = append(q.order, turn)
		if len(q.order) > maxTurns {
			delete(q.used, q.order[0])
			q.order = q.order[1:]
		}
	}
	n = min(n, q.max-q.used[turn])
	q.used[turn] += n
	return n
}
