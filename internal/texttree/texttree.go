// Package texttree writes a deterministic tree of text files, the corpus
// search benchmarks run on (builtin/workspace's BenchmarkSearchFiles and
// "quiver bench"'s search comparison), so that both search the same bytes.
package texttree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Markers are the strings a tree holds on purpose: Needle in one file in
// 400 (the middle line), Marker in one file in 1,000 (the fourth line).
// No other line holds either, so a search for them matches few lines and
// must still read every file.
const (
	Needle = "quiver_needle"
	Marker = "Zebra_Marker"
)

// words are what the lines are made of: Greek letters and Go keywords.
var words = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega " +
	"func return package import struct interface map slice string error context value pointer channel select defer range type var const")

// Write writes n files under dir (created when missing): 100 folders
// d000…d099, file i in folder i%100 named fNNNNN.txt, each of 20 to 40
// lines of 6 to 12 words. The same n gives the same bytes on every run
// (a fixed seed). The first error stops it; files written before stay.
func Write(dir string, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for i := range n {
		sb.Reset()
		file(&sb, rng, i)
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("texttree: %w", err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
			return fmt.Errorf("texttree: %w", err)
		}
	}
	return nil
}

// file writes file i's lines to sb.
func file(sb *strings.Builder, rng *rand.Rand, i int) {
	lines := 20 + rng.IntN(21)
	for l := range lines {
		for w := range 6 + rng.IntN(7) {
			if w > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		if l == lines/2 && i%400 == 7 {
			sb.WriteString(" " + Needle)
		}
		if l == 3 && i%1000 == 11 {
			sb.WriteString(" " + Marker)
		}
		sb.WriteByte('\n')
	}
}
