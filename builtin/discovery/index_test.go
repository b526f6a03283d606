package discovery_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/builtin/discovery"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/tool"
)

// mcpTool is one tool of testdata/mcp_catalog.json, as an MCP server
// lists it.
type mcpTool struct {
	Server      string             `json:"server"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"inputSchema"`
}

// catalog150 is the built-in catalog's tools (but the discovery tools) followed by the MCP-shaped
// tools of testdata/mcp_catalog.json, imported as mcpclient names them.
func catalog150(t testing.TB) []*tool.Tool {
	t.Helper()
	// The discovery tools are left out: search_tools never finds them.
	tools := slices.DeleteFunc(builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir()}).Tools(),
		func(t *tool.Tool) bool { return slices.Contains(discovery.Names, t.Name()) })
	data, err := os.ReadFile("testdata/mcp_catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []mcpTool
	if err := json.Unmarshal(data, &listed); err != nil {
		t.Fatal(err)
	}
	for _, m := range listed {
		spec := tool.Spec{Name: mcpclient.WireName(m.Server, m.Name), Family: "mcp:" + m.Server, Description: m.Description}
		tl, err := tool.Import(spec, m.InputSchema, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil })
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		tools = append(tools, tl)
	}
	return tools
}

// searchTask is one labelled line of a task file (testdata/search_tasks.jsonl,
// testdata/search_tasks_dev.jsonl): a query and the tools any of which
// answers it.
type searchTask struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

func searchTasks(t testing.TB, path string) []searchTask {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []searchTask
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var st searchTask
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		out = append(out, st)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recallAtFive is the share of the tasks of path with a wanted tool
// among the first five search answers on the 150-tool catalog, each
// miss logged (seen with -v). A task wanting a tool the catalog lacks
// fails the test.
// wantRecallAtFive fails the test when the recall@5 of the tasks at path
// is below min.
func wantRecallAtFive(t *testing.T, path string, min float64) {
	t.Helper()
	if recall := recallAtFive(t, path); recall < min {
		t.Errorf("recall@5 %.3f, below %.2f", recall, min)
	}
}

func recallAtFive(t *testing.T, path string) float64 {
	t.Helper()
	if raceDetector {
		// Hundreds of searches one after another: under the race detector
		// a minute that proves nothing the plain runs do not (the
		// concurrent searches have tests of their own).
		t.Skip("a recall measure, without concurrency: run without -race")
	}
	tools := catalog150(t)
	if len(tools) < 150 { // the built-ins grow (run_code made it 151)
		t.Errorf("%d tools in the catalog, want at least 150", len(tools))
	}
	ix, err := discovery.NewIndex(context.Background(), tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	tasks := searchTasks(t, path)
	if len(tasks) < 100 {
		t.Fatalf("%s: %d tasks, want at least 100", path, len(tasks))
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name()] = true
	}
	found := 0
	for _, st := range tasks {
		for _, w := range st.Want {
			if !names[w] {
				t.Fatalf("%q wants %s, not in the catalog", st.Query, w)
			}
		}
		got, err := ix.Search(context.Background(), st.Query, 5)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(got, func(n string) bool { return slices.Contains(st.Want, n) }) {
			found++
		} else {
			t.Logf("miss: %q wants %v, got %v", st.Query, st.Want, got)
		}
	}
	recall := float64(found) / float64(len(tasks))
	t.Logf("recall@5 = %.3f (%d of %d tasks, %d tools)", recall, found, len(tasks), len(tools))
	return recall
}

// TestSearchRecallAtFive measures search_tools' ranking on the 150-tool
// catalog: the share of the labelled tasks of testdata/search_tasks.jsonl
// with a wanted tool among the first five. The set was written without
// seeing the ranking and was sealed until it was measured once (0.874);
// since then it is development data, read and tuned on like the dev
// set, and a new sealed set is measured by the lead. The test fails
// below minRecallAtFive, the figure reached after that tuning (0.984,
// 188 of 191 tasks) less 0.03 and rounded down, so a change that loses
// recall is seen (-v prints the misses).
func TestSearchRecallAtFive(t *testing.T) {
	const minRecallAtFive = 0.95
	wantRecallAtFive(t, "testdata/search_tasks.jsonl", minRecallAtFive)
}

// TestSearchRecallAtFiveSealedThird is the measure on the third sealed
// set, testdata/search_tasks_sealed3.jsonl: 286 tasks over every tool,
// written by someone who read only the tools' names and descriptions, and
// run once, after the tuning on every other set ended: 0.937 (268 of 286,
// 159 tools), past the 0.9 target. The test fails below minRecallAtFive,
// that figure less 0.03; tune nothing on this set.
func TestSearchRecallAtFiveSealedThird(t *testing.T) {
	const minRecallAtFive = 0.90
	wantRecallAtFive(t, "testdata/search_tasks_sealed3.jsonl", minRecallAtFive)
}

// TestSearchRecallAtFiveSealed is the measure on the second sealed set,
// testdata/search_tasks_sealed.jsonl: 319 tasks over every tool of the
// catalog, written by someone who read only the tools' names and
// descriptions (no ranking code, alias table or other task set), and run
// once, after the tuning on the dev set and the first sealed set ended:
// 0.893 (285 of 319, 159 tools). Since that measure it is development
// data: two thirds of it were read and tuned on (the families of words
// its misses showed), a fixed third held out (tune_test.go's
// sealedSplit, 0.849 before that tuning, 0.868 after). The test fails
// below minRecallAtFive, the figure reached (0.937, 299 of 319) less
// 0.03 and rounded down; the honest figure is a third sealed set's.
func TestSearchRecallAtFiveSealed(t *testing.T) {
	const minRecallAtFive = 0.90
	wantRecallAtFive(t, "testdata/search_tasks_sealed.jsonl", minRecallAtFive)
}

// TestSearchRecallAtFiveDev is the same measure on the development set,
// testdata/search_tasks_dev.jsonl: tasks written from the catalog's names
// and descriptions, in several phrasings, the set the ranking (weights,
// aliases) was tuned on, but for a fixed fifth held out (tune_test.go's
// holdoutSplit). Its figure flatters the ranking. The test fails below
// minRecallAtFive, the figure reached (0.971, 884 of 910 tasks) less
// 0.03, rounded down. -v prints the misses.
func TestSearchRecallAtFiveDev(t *testing.T) {
	const minRecallAtFive = 0.94
	wantRecallAtFive(t, "testdata/search_tasks_dev.jsonl", minRecallAtFive)
}

// TestSearchReadsNoQuerySyntax: FTS5's operators and quotes in a query
// are words, never syntax (no error, no injection), an empty query finds
// nothing, and a plain query ranks the tool it names first.
func TestSearchReadsNoQuerySyntax(t *testing.T) {
	// The discovery tools are left out: search_tools never finds them.
	tools := slices.DeleteFunc(builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir()}).Tools(),
		func(t *tool.Tool) bool { return slices.Contains(discovery.Names, t.Name()) })
	ix, err := discovery.NewIndex(context.Background(), tools)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{`"unbalanced`, `files OR NOT budget*`, `NEAR(a b)`, `col:web ^search`, `'); DROP TABLE tools; --`} {
		if _, err := ix.Search(context.Background(), q, 5); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	if got, err := ix.Search(context.Background(), " -- ", 5); err != nil || len(got) != 0 {
		t.Errorf("a query without words: %v, %v", got, err)
	}
	got, err := ix.Search(context.Background(), "search the web", 5)
	if err != nil || len(got) == 0 || got[0] != "web_search" {
		t.Errorf("search the web: %v, %v; want web_search first", got, err)
	}
	if got, _ := ix.Search(context.Background(), "budget", 3); len(got) > 3 {
		t.Errorf("%d results for k=3", len(got))
	}
}

// FuzzSearch: whatever the query, Search answers without an error and
// with at most k names of indexed tools.
func FuzzSearch(f *testing.F) {
	tools := builtin.NewCatalog(builtin.CatalogDeps{DataDir: f.TempDir()}).Tools()
	ix, err := discovery.NewIndex(context.Background(), tools)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ix.Close() })
	for _, s := range []string{"search the web", `"x`, "a OR b NOT c", "日本語 検索", "\xff\xfe", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, err := ix.Search(context.Background(), q, 5)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if len(got) > 5 {
			t.Fatalf("%q: %d results", q, len(got))
		}
	})
}

// TestSearchAfterCancelAndConcurrently: a search whose context is
// cancelled fails alone: the index (an in-memory database on the one
// connection it holds) answers the next searches, also from several
// goroutines at once.
func TestSearchAfterCancelAndConcurrently(t *testing.T) {
	ix, err := discovery.NewIndex(context.Background(), builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir()}).Tools())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Search(ctx, "search the web", 5); err == nil {
		t.Error("a cancelled search answered")
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := ix.Search(context.Background(), "search the web", 5)
			if err == nil && (len(got) == 0 || got[0] != "web_search") {
				err = errors.New("web_search not first: " + strings.Join(got, ","))
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkSearch is one search_tools query on the 150-tool index: the
// query reading and both BM25 passes.
func BenchmarkSearch(b *testing.B) {
	ix, err := discovery.NewIndex(context.Background(), catalog150(b))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	queries := []string{"what's on my calendar tomorrow", "turn this spreadsheet into a chart", "remind me on Friday to call mom",
		"open a github issue for the login bug", "is it raining in London right now"}
	b.ResetTimer()
	for i := range b.N {
		if _, err := ix.Search(context.Background(), queries[i%len(queries)], 5); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchUncached is BenchmarkSearch with the index's cache of
// words' hits emptied before each search: every word an FTS5 query, as
// for a query of words not asked before.
func BenchmarkSearchUncached(b *testing.B) {
	ix, err := discovery.NewIndex(context.Background(), catalog150(b))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	queries := []string{"what's on my calendar tomorrow", "turn this spreadsheet into a chart", "remind me on Friday to call mom",
		"open a github issue for the login bug", "is it raining in London right now"}
	b.ResetTimer()
	for i := range b.N {
		ix.DropCache()
		if _, err := ix.Search(context.Background(), queries[i%len(queries)], 5); err != nil {
			b.Fatal(err)
		}
	}
}
