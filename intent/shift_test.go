package intent_test

import (
	"math"
	"os"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// TestInputShiftMovesTheClassifier: a community's shift (Input.Shift)
// replaces the detector's for that call: on the validation split, the
// classifier alone opens strictly fewer families at +0.25 than with the
// detector's own shift, and strictly more at -0.25; nil (and NaN) keeps
// the detector's, and a shift past MaxShift counts as MaxShift.
func TestInputShiftMovesTheClassifier(t *testing.T) {
	lines, err := intent.ReadCorpus(os.DirFS("."), "testdata/corpus/validation/*.jsonl", intent.CorpusFamilies)
	if err != nil || len(lines) == 0 {
		t.Fatalf("validation split: %d lines, %v", len(lines), err)
	}
	c, err := intent.BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	d, err := intent.NewClassifierOnly(c)
	if err != nil {
		t.Fatal(err)
	}
	opens := func(shift *float64) int {
		n := 0
		for _, l := range lines {
			n += len(d.Detect(intent.Input{Text: l.Text, Shift: shift}).Targets)
		}
		return n
	}
	f := func(v float64) *float64 { return &v }
	base := opens(nil)
	if up, down := opens(f(0.25)), opens(f(-0.25)); up >= base || down <= base {
		t.Errorf("families opened: %d at -0.25, %d with the detector's shift, %d at +0.25; want strictly fewer as the shift grows", down, base, up)
	}
	if got := opens(f(0)); got != base {
		t.Errorf("a shift of 0 opened %d, the detector's (0) %d", got, base)
	}
	if got := opens(f(math.NaN())); got != base {
		t.Errorf("a NaN shift opened %d, want the detector's %d", got, base)
	}
	if a, b := opens(f(3)), opens(f(intent.MaxShift)); a != b {
		t.Errorf("a shift of 3 opened %d, MaxShift %d: want it clamped", a, b)
	}
}
