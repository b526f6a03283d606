package intent_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/intent"
)

// semanticSplit picks the corpus split TestSemanticSplitEval measures:
// go test -count=1 -run TestSemanticSplitEval -v ./intent/ -semantic-split validation
var semanticSplit = flag.String("semantic-split", "validation", "the corpus split TestSemanticSplitEval measures (validation, test, train)")

// TestSemanticSplitEval measures the semantic stage with embed.Local on
// a split of the corpus (-semantic-split, default validation), alone and
// after the packs and the classifier, beside the packs and the
// classifier without it, per language and overall, and prints the table
// with -v. Counted as TestSplitEval counts. It fails if the stage
// lowers the recall of the stages before it, or finds nothing at all.
func TestSemanticSplitEval(t *testing.T) {
	if raceDetector {
		// A measurement over thousands of messages, one at a time: four
		// minutes under the race detector, proving nothing the plain
		// runs do not (TestSemanticWithLocal and the stage's own tests
		// run there).
		t.Skip("a single-threaded measurement; the plain test runs make it")
	}
	lines, err := intent.ReadCorpus(os.DirFS("."), "testdata/corpus/"+*semanticSplit+"/*.jsonl", intent.CorpusFamilies)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Skipf("no %s split", *semanticSplit)
	}
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	both := detector(t).WithClassifier(c, 0)
	sem := builtinSemantic(t)
	ctx := context.Background()
	e := embed.Local{}
	names := []string{"semantic", "packs+classifier", "all three"}
	byLang := make([]map[string]*splitCounts, len(names))
	for i := range names {
		byLang[i] = map[string]*splitCounts{}
	}
	get := func(m map[string]*splitCounts, k string) *splitCounts {
		if m[k] == nil {
			m[k] = &splitCounts{}
		}
		return m[k]
	}
	byFam := map[string][2]int{} // semantic alone: requests, found
	for _, l := range lines {
		want := slices.DeleteFunc(slices.Clone(l.Want), func(w string) bool { return !slices.Contains(intent.Targets, w) })
		if len(l.Want) > 0 && len(want) == 0 {
			continue
		}
		alone, err := sem.Match(ctx, e, l.Text, intent.Result{})
		if err != nil {
			t.Fatal(err)
		}
		before := both.Detect(intent.Input{Text: l.Text})
		added, err := sem.Match(ctx, e, l.Text, before)
		if err != nil {
			t.Fatal(err)
		}
		gots := [][]string{intent.Result{}.With(alone...).Targets, before.Targets, before.With(added...).Targets}
		for i, got := range gots {
			for _, row := range []*splitCounts{get(byLang[i], l.Lang), get(byLang[i], "all")} {
				if len(want) == 0 {
					row.none++
					if len(got) > 0 {
						row.opened++
					}
					continue
				}
				row.need++
				if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) }) {
					row.found++
				}
			}
		}
		for _, w := range want {
			f := byFam[w]
			f[0]++
			if slices.Contains(gots[0], w) {
				f[1]++
			}
			byFam[w] = f
		}
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "lang\tneed\tnone\t")
	for _, n := range names {
		fmt.Fprintf(w, "%s recall\tfalse opens\t", n)
	}
	fmt.Fprintln(w)
	for _, lang := range slices.Sorted(mapKeys(byLang[0])) {
		r := byLang[0][lang]
		fmt.Fprintf(w, "%s\t%d\t%d\t", lang, r.need, r.none)
		for i := range names {
			c := byLang[i][lang]
			fmt.Fprintf(w, "%.1f%%\t%.1f%%\t", 100*c.recall(), 100*c.falseOpen())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nfamily\trequests\tsemantic recall\t\n")
	for _, fam := range slices.Sorted(mapKeys(byFam)) {
		f := byFam[fam]
		fmt.Fprintf(w, "%s\t%d\t%.1f%%\t\n", fam, f[0], 100*ratio(f[1], f[0], 1))
	}
	w.Flush()
	t.Logf("split %s, %s:\n%s", *semanticSplit, e.Model(), b.String())
	if testing.Verbose() {
		fmt.Printf("split %s, %s:\n%s", *semanticSplit, e.Model(), b.String())
	}
	if s, p, all := byLang[0]["all"], byLang[1]["all"], byLang[2]["all"]; all.recall() < p.recall() || s.found == 0 {
		t.Errorf("semantic stage: recall %.1f%% alone, %.1f%% after the packs and classifier (%.1f%% without it)",
			100*s.recall(), 100*all.recall(), 100*p.recall())
	}
}
