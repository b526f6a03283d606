package discovery

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	_ "modernc.org/sqlite" // the in-memory full-text index (FTS5)

	"github.com/quiverhq/quiver/tool"
)

// Index finds tools for a query, for search_tools: a full-text ranking,
// SQLite FTS5's BM25 over each tool's name words, family, description
// and parameters (English words stemmed by the Porter stemmer, accents
// folded), any word of the query matching. The query is read first
// (queryGroups): its stop words are dropped, and the aliases tables (an
// English one, one for other languages) give each word the words tools
// use for it. A tool's score is the sum over the query's words of its
// BM25 score for the word and, at aliasWeight shared among them, for the
// word's aliases: the words asked are one FTS5 query and each word's
// aliases another, whose hits the index caches. FTS5 rather than a ranking of our own: it is SQLite's
// maintained full-text engine, already in the binary (it fixes BM25's
// k1 and b at 1.2 and 0.75, for every column). Fusing it with the local
// n-gram embedding (embed.Local) was measured twice and lost recall:
// 0.513 against 0.534 at five before the aliases, and as a rerank of
// the first 5 to 20 tools, 0.945 against 0.956 on held-out dev tasks:
// that embedding shares spelling, not meaning.
//
// An Index's tools are fixed once built; it is safe for concurrent use.
type Index struct {
	db *sql.DB
	// conn is the one connection the in-memory database lives on, held
	// for the index's lifetime (the pool could otherwise replace it, and
	// the table with it); mu serialises its use.
	conn  *sql.Conn
	mu    sync.Mutex
	names []string // by rowid-1
	// match is the prepared ranking query (on conn).
	match *sql.Stmt
	// cache holds the hits of the FTS5 queries made, by their text (at
	// most maxCached).
	cache map[string][]hit
}

// Column weights of the BM25 ranking (name, family, description,
// parameters): a word of the tool's name counts most, then its family,
// its description, its parameters. Chosen on a grid over the dev tasks,
// whose best settings lay on a plateau (within 0.5% of each other).
const bm25Weights = "8.0, 4.0, 1.0, 0.5"

// NewIndex indexes tools (their order breaks ties).
func NewIndex(ctx context.Context, tools []*tool.Tool) (*Index, error) {
	// One connection: an in-memory database lives as long as it does.
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, fmt.Errorf("discovery: open the index: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("discovery: open the index: %w", err)
	}
	ix := &Index{db: db, conn: conn, cache: map[string][]hit{}}
	if err := ix.fill(ctx, tools); err != nil {
		ix.Close()
		return nil, err
	}
	// bm25() is lower for a better match: its negation is the score.
	if ix.match, err = conn.PrepareContext(ctx, `SELECT rowid, -bm25(tools, `+bm25Weights+`) FROM tools WHERE tools MATCH ?`); err != nil {
		ix.Close()
		return nil, fmt.Errorf("discovery: prepare the search: %w", err)
	}
	return ix, nil
}

// fill creates the table and writes every tool's row.
func (ix *Index) fill(ctx context.Context, tools []*tool.Tool) error {
	if _, err := ix.conn.ExecContext(ctx, `CREATE VIRTUAL TABLE tools USING fts5(name, family, description, params,
		tokenize = 'porter unicode61 remove_diacritics 2')`); err != nil {
		return fmt.Errorf("discovery: create the index: %w", err)
	}
	for i, t := range tools {
		d := t.Declaration()
		name, params := words(t.Name()), paramText(d.Parameters)
		if _, err := ix.conn.ExecContext(ctx, `INSERT INTO tools(rowid, name, family, description, params) VALUES (?, ?, ?, ?, ?)`,
			i+1, name, words(t.Family()), d.Description, params); err != nil {
			return fmt.Errorf("discovery: index %s: %w", t.Name(), err)
		}
		ix.names = append(ix.names, t.Name())
	}
	return nil
}

// maxQueryTerms bounds the words of one query the search reads.
const maxQueryTerms = 32

// Close frees the index.
func (ix *Index) Close() error {
	var err error
	if ix.match != nil {
		err = ix.match.Close()
	}
	return errors.Join(err, ix.conn.Close(), ix.db.Close())
}

// aliasWeight is how much the words the aliases table gives for one
// word of the query count, together, against a word asked: a word's
// aliases share it, each at aliasWeight/sqrt(n) of n (aliasSplit), so a
// word with many aliases ("tomorrow" → calendar, events, forecast) does
// not outweigh one word matched directly ("weather"). Both chosen on the
// dev tasks, on a plateau: splitting by n^0.3 to n^0.7 and weights 0.8
// to 1.0 stay within 0.005 of each other. Variables only so that
// tune_test.go can measure others.
var (
	aliasWeight = 0.9
	aliasSplit  = 0.5
)

// hit is one tool's BM25 score for the words of one FTS5 query.
type hit struct {
	row   int
	score float64
}

// maxCached bounds the FTS5 queries whose hits an index keeps: the
// queries repeat (a word's aliases above all), and a cached one costs no
// FTS5 search; past the bound, new ones are searched every time.
const maxCached = 4096

// Search returns the names of at most k tools for query, best first.
// A query with no word gives none.
func (ix *Index) Search(ctx context.Context, query string, k int) ([]string, error) {
	groups := queryGroups(query)
	if len(groups) == 0 || k <= 0 {
		return nil, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	score := make([]float64, len(ix.names))
	// The words asked are one FTS5 query, each word's aliases another:
	// BM25 sums over the words of a query, so a query's hits are the sum
	// of its words'.
	var asked []string
	for _, g := range groups {
		if g.word != "" {
			asked = append(asked, g.word)
		}
	}
	if err := ix.add(ctx, asked, 1, score); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if len(g.aliases) > 0 {
			if err := ix.add(ctx, g.aliases, aliasWeight/math.Pow(float64(len(g.aliases)), aliasSplit), score); err != nil {
				return nil, err
			}
		}
	}
	order := make([]int, 0, len(score))
	for i, s := range score {
		if s > 0 {
			order = append(order, i)
		}
	}
	// Best score first; the tools' order breaks ties.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	out := make([]string, 0, min(k, len(order)))
	for _, i := range order[:min(k, len(order))] {
		out = append(out, ix.names[i])
	}
	return out, nil
}

// add adds weight times the BM25 score of each tool matching any of
// terms to score, by rowid-1. ix.mu is held.
func (ix *Index) add(ctx context.Context, terms []string, weight float64, score []float64) error {
	if len(terms) == 0 {
		return nil
	}
	hits, err := ix.hits(ctx, terms)
	if err != nil {
		return err
	}
	for _, h := range hits {
		score[h.row] += weight * h.score
	}
	return nil
}

// hits is the BM25 score of every tool matching any of terms (each
// quoted, so no word is read as FTS5 syntax), by rowid-1, from the cache
// when it is there. ix.mu is held.
func (ix *Index) hits(ctx context.Context, terms []string) ([]hit, error) {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	q := strings.Join(quoted, " OR ")
	if h, ok := ix.cache[q]; ok {
		return h, nil
	}
	rows, err := ix.match.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("discovery: search the index: %w", err)
	}
	defer rows.Close()
	var out []hit
	for rows.Next() {
		var id int
		var s float64
		if err := rows.Scan(&id, &s); err != nil {
			return nil, fmt.Errorf("discovery: search the index: %w", err)
		}
		if id >= 1 && id <= len(ix.names) && s > 0 {
			out = append(out, hit{id - 1, s})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("discovery: search the index: %w", err)
	}
	if len(ix.cache) < maxCached {
		ix.cache[q] = out
	}
	return out, nil
}

// words is s with every run of characters that are not letters or
// digits made one space ("github__create_issue" → "github create
// issue"): the words FTS5 indexes, and no character its query syntax
// reads.
func words(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}

// paramText is the names and descriptions of a schema's top-level
// properties, as words.
func paramText(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(words(name) + " " + s.Properties[name].Description + " ")
	}
	return b.String()
}
