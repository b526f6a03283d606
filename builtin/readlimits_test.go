package builtin_test

import (
	"slices"
	"testing"

	"github.com/quiverhq/quiver/builtin"
)

// readerLimits are the names under which a reading tool lists the most
// text one call returns. A new reader that lists its maximum under one of
// them joins TestPageReadingHasTheLowestLimit by itself.
var readerLimits = []string{"max_output_chars", "maxChars_max", "max_length_max"}

// TestPageReadingHasTheLowestLimit holds the first product document's rule:
// page reading has the lowest per-call limit of the set, since a fetched
// page is untrusted and the costliest text to carry. fetch_url's maximum,
// read from the catalog's specs, must be strictly below every other reading
// tool's, and its default below its maximum.
func TestPageReadingHasTheLowestLimit(t *testing.T) {
	maxes := map[string]int{}
	var fetchDefault int
	for _, tl := range builtin.NewCatalog(builtin.CatalogDeps{}).Tools() {
		for _, l := range tl.Spec().Limits {
			if slices.Contains(readerLimits, l.Name) {
				maxes[tl.Name()] = l.Value
			}
			if tl.Name() == "fetch_url" && l.Name == "max_length_default" {
				fetchDefault = l.Value
			}
		}
	}
	// The readers the product document names must be found, or the
	// comparison below would pass by finding nothing.
	for _, name := range []string{"fetch_url", "read_file", "search_files", "read_tool_result", "read_transcript"} {
		if _, ok := maxes[name]; !ok {
			t.Fatalf("%s lists no per-call maximum under %v: found %v", name, readerLimits, maxes)
		}
	}
	fetchMax := maxes["fetch_url"]
	for name, m := range maxes {
		if name != "fetch_url" && fetchMax >= m {
			t.Errorf("fetch_url's per-call maximum %d is not below %s's %d", fetchMax, name, m)
		}
	}
	if fetchDefault <= 0 || fetchDefault >= fetchMax {
		t.Errorf("fetch_url's default %d is not below its maximum %d", fetchDefault, fetchMax)
	}
	t.Logf("per-call maxima: %v; fetch_url's default %d", maxes, fetchDefault)
}
