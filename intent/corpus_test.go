package intent_test

import (
	"os"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// TestCorpusSplitsAreDisjoint: every file of the three splits parses
// with known families, and no message (compared normalised, so case,
// accents and punctuation do not hide a copy) appears twice, within a
// split or across them. A test line also in train or validation would
// make the figures measure memory rather than understanding.
func TestCorpusSplitsAreDisjoint(t *testing.T) {
	fsys := os.DirFS(".")
	seen := map[string]string{} // normalised text → split:lang
	for _, split := range []string{"train", "validation", "test"} {
		lines, err := intent.ReadCorpus(fsys, "testdata/corpus/"+split+"/*.jsonl", intent.CorpusFamilies)
		if err != nil {
			t.Fatalf("%s: %v", split, err)
		}
		if len(lines) == 0 {
			t.Fatalf("%s: no lines", split)
		}
		for _, l := range lines {
			key := intent.Normalise(l.Text)
			where := split + ":" + l.Lang
			if prev, ok := seen[key]; ok {
				t.Errorf("%q (%s) already in %s", l.Text, where, prev)
				continue
			}
			seen[key] = where
		}
	}
}
