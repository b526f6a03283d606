package intent_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/quiverhq/quiver/intent"
)

// splitGlob picks the corpus split TestSplitEval measures:
// go test -run TestSplitEval -v -split validation ./intent/
var splitName = flag.String("split", "test", "the corpus split TestSplitEval measures (test, validation, train)")

// stage is one way of detecting: the packs alone, the classifier alone,
// or both.
type stage struct {
	name string
	d    *intent.Detector
}

// splitCounts are one row's counts.
type splitCounts struct {
	need, found    int // messages needing a family; of those, all found
	none, opened   int // messages needing none; of those, opened one
	famNeed, famOK int // per family rows: requests of it; of those, opened
	famWrong       int // per family rows: messages needing none that opened it
}

func (c splitCounts) recall() float64    { return ratio(c.found, c.need, 1) }
func (c splitCounts) falseOpen() float64 { return ratio(c.opened, c.none, 0) }

// TestSplitEval measures Deliberate Tool Mode on a split of the corpus
// (-split, default test: messages written without seeing the packs),
// per language and per family, for the packs alone, the classifier
// alone and both, and prints the tables with -v. Only the families the
// mode opens today are counted (a label for a family whose tools are
// still to come is left out of both sides). It fails if adding the
// classifier lowers the packs' recall, which would make it pointless,
// or opens families on more than twice the packs' share of messages
// needing none plus 3 points.
func TestSplitEval(t *testing.T) {
	lines, err := intent.ReadCorpus(os.DirFS("."), "testdata/corpus/"+*splitName+"/*.jsonl", intent.CorpusFamilies)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Skipf("no %s split yet", *splitName)
	}
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	packs := detector(t)
	alone, err := intent.NewClassifierOnly(c)
	if err != nil {
		t.Fatal(err)
	}
	stages := []stage{{"packs", packs}, {"classifier", alone}, {"both", packs.WithClassifier(c, 0)}}
	byLang := make([]map[string]*splitCounts, len(stages))
	byFam := make([]map[string]*splitCounts, len(stages))
	for i := range stages {
		byLang[i], byFam[i] = map[string]*splitCounts{}, map[string]*splitCounts{}
	}
	get := func(m map[string]*splitCounts, k string) *splitCounts {
		if m[k] == nil {
			m[k] = &splitCounts{}
		}
		return m[k]
	}
	for _, l := range lines {
		want := slices.DeleteFunc(slices.Clone(l.Want), func(w string) bool { return !slices.Contains(intent.Targets, w) })
		if len(l.Want) > 0 && len(want) == 0 {
			continue // a family still to come
		}
		for i, s := range stages {
			got := s.d.Detect(intent.Input{Text: l.Text}).Targets
			if len(want) == 0 {
				for _, g := range got {
					get(byFam[i], g).famWrong++
				}
			}
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
			for _, w := range want {
				f := get(byFam[i], w)
				f.famNeed++
				if slices.Contains(got, w) {
					f.famOK++
				}
			}
		}
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "lang\tneed\tnone\t")
	for _, s := range stages {
		fmt.Fprintf(w, "%s recall\t%s false open\t", s.name, s.name)
	}
	fmt.Fprintln(w)
	for _, lang := range slices.Sorted(mapKeys(byLang[0])) {
		r := byLang[0][lang]
		fmt.Fprintf(w, "%s\t%d\t%d\t", lang, r.need, r.none)
		for i := range stages {
			c := byLang[i][lang]
			fmt.Fprintf(w, "%.1f%%\t%.1f%%\t", 100*c.recall(), 100*c.falseOpen())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nfamily\trequests\t\t")
	for _, s := range stages {
		fmt.Fprintf(w, "%s recall\t%s false open\t", s.name, s.name)
	}
	fmt.Fprintln(w)
	for _, fam := range slices.Sorted(mapKeys(byFam[0])) {
		if byFam[0][fam].famNeed == 0 {
			continue // opened by mistake only; its row would have no requests
		}
		fmt.Fprintf(w, "%s\t%d\t\t", fam, byFam[0][fam].famNeed)
		for i := range stages {
			f := get(byFam[i], fam)
			fmt.Fprintf(w, "%.1f%%\t%.1f%%\t", 100*ratio(f.famOK, f.famNeed, 1), 100*ratio(f.famWrong, byLang[i]["all"].none, 0))
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	t.Logf("split %s:\n%s", *splitName, b.String())
	if testing.Verbose() {
		fmt.Print(b.String())
	}
	p, both := byLang[0]["all"], byLang[2]["all"]
	if both.recall() < p.recall() {
		t.Errorf("the classifier lowers recall: %.1f%% with it, %.1f%% with the packs alone", 100*both.recall(), 100*p.recall())
	}
	if both.falseOpen() > 2*p.falseOpen()+0.03 {
		t.Errorf("the classifier opens families on %.1f%% of messages needing none (packs alone %.1f%%)", 100*both.falseOpen(), 100*p.falseOpen())
	}
}
