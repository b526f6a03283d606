package intent_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// TestLongRepetitiveMessage: a long message full of triggers costs the
// same bounded work as its first MaxScanBytes, and still opens what its
// start asks for.
func TestLongRepetitiveMessage(t *testing.T) {
	d := detector(t)
	msg := strings.Repeat("search for the news and remind me ", 20000) // ~680 KB
	res := d.Detect(intent.Input{Text: msg})
	if !res.Has(intent.Search) || !res.Has(intent.Reminder) {
		t.Fatalf("targets %v", res.Targets)
	}
}

func BenchmarkDetectLongMessage(b *testing.B) {
	d := detector(b)
	msg := strings.Repeat("search for the news and remind me ", 20000)
	for b.Loop() {
		d.Detect(intent.Input{Text: msg})
	}
}
