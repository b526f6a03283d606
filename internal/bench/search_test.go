package bench

import (
	"strings"
	"testing"
)

// TestMatchingLines: search_files' output and ripgrep's for the same
// matches give the same lines: context lines, group separators, notes
// and ripgrep's "./" prefix left out.
func TestMatchingLines(t *testing.T) {
	quiver := "d007/f00007.txt\n11-alpha beta\n12:gamma quiver_needle\n13-delta\n--\n30:quiver_needle again\n\nd011/f00011.txt\n4:Zebra_Marker\n[skipped 1 files over 1048576 bytes]"
	rg := "./d011/f00011.txt\n4:Zebra_Marker\n\n./d007/f00007.txt\n11-alpha beta\n12:gamma quiver_needle\n13-delta\n--\n30:quiver_needle again\n"
	want := []string{"d007/f00007.txt:12", "d007/f00007.txt:30", "d011/f00011.txt:4"}
	for name, got := range map[string][]string{"search_files": matchingLines(quiver, ""), "ripgrep": matchingLines(rg, "./")} {
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}
