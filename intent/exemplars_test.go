package intent_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// updateExemplars rewrites exemplars.jsonl from the train split:
// go test -run TestExemplarsAreFromTheTrainSplit -update-exemplars ./intent/
var updateExemplars = flag.Bool("update-exemplars", false, "rewrite intent/exemplars.jsonl from the corpus's train split")

// negativesPerLang is how many messages needing no family each language
// gives the built-in exemplars (with ExemplarsPerFamily per family, the
// set stays under one Embed call's texts).
const negativesPerLang = 100

// pickExemplars is the deterministic pick of the built-in exemplars from
// the train split's lines: per family (in Targets order), the requests
// wanting that family alone, taken in turn from each language (in file
// name order), each language's spread evenly over its file, until
// ExemplarsPerFamily; then negativesPerLang chat and near-miss messages
// per language, spread the same way.
func pickExemplars(lines []intent.CorpusLine, perFamily, negPerLang int) []intent.Exemplar {
	var langs []string
	for _, l := range lines {
		if !slices.Contains(langs, l.Lang) {
			langs = append(langs, l.Lang)
		}
	}
	slices.Sort(langs)
	// spread picks k of xs, evenly spaced.
	spread := func(xs []string, k int) []string {
		if k >= len(xs) {
			return xs
		}
		out := make([]string, k)
		for j := range k {
			out[j] = xs[j*len(xs)/k]
		}
		return out
	}
	var out []intent.Exemplar
	for _, fam := range intent.Targets {
		byLang := map[string][]string{}
		total := 0
		for _, l := range lines {
			if len(l.Want) == 1 && l.Want[0] == fam && (l.Kind == "request" || l.Kind == "capability") {
				byLang[l.Lang] = append(byLang[l.Lang], l.Text)
				total++
			}
		}
		if total == 0 {
			continue
		}
		// Each language's share, then its lines spread over its file.
		share := map[string]int{}
		for n := 0; n < min(perFamily, total); {
			for _, lang := range langs {
				if n < min(perFamily, total) && share[lang] < len(byLang[lang]) {
					share[lang]++
					n++
				}
			}
		}
		for _, lang := range langs {
			for _, text := range spread(byLang[lang], share[lang]) {
				out = append(out, intent.Exemplar{Family: fam, Text: text})
			}
		}
	}
	for _, lang := range langs {
		var negs []string
		for _, l := range lines {
			if l.Lang == lang && len(l.Want) == 0 && (l.Kind == "chat" || l.Kind == "nearmiss") {
				negs = append(negs, l.Text)
			}
		}
		for _, text := range spread(negs, negPerLang) {
			out = append(out, intent.Exemplar{Text: text})
		}
	}
	return out
}

func trainLines(t testing.TB) []intent.CorpusLine {
	t.Helper()
	lines, err := intent.ReadCorpus(os.DirFS("."), "testdata/corpus/train/*.jsonl", intent.CorpusFamilies)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestExemplarsAreFromTheTrainSplit: every built-in exemplar is a line
// of the train split with the same label (a request wanting its family
// alone, or a message wanting none), so the validation and test splits
// measure the stage on messages it has not seen; at most
// ExemplarsPerFamily per family. With -update-exemplars it rewrites the
// file first.
func TestExemplarsAreFromTheTrainSplit(t *testing.T) {
	lines := trainLines(t)
	if *updateExemplars {
		var b bytes.Buffer
		for _, x := range pickExemplars(lines, intent.ExemplarsPerFamily, negativesPerLang) {
			line, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile("exemplars.jsonl", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skip("exemplars.jsonl rewritten: rebuild to embed it")
	}
	xs, err := intent.BuiltinExemplars()
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, x := range xs {
		per[x.Family]++
		ok := slices.ContainsFunc(lines, func(l intent.CorpusLine) bool {
			if l.Text != x.Text {
				return false
			}
			if x.Family == "" {
				return len(l.Want) == 0
			}
			return len(l.Want) == 1 && l.Want[0] == x.Family
		})
		if !ok {
			t.Errorf("exemplar %q (%q) is not a train line with that label", x.Text, x.Family)
		}
	}
	for fam, n := range per {
		if fam != "" && n > intent.ExemplarsPerFamily {
			t.Errorf("%s: %d exemplars, at most %d", fam, n, intent.ExemplarsPerFamily)
		}
	}
	if per[""] == 0 || len(per) < 10 {
		t.Errorf("exemplars per family: %v", per)
	}
}
