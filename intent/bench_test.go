package intent_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// Matching throughput against every shipped pack:
//
//	go test -run '^$' -bench 'Detect|RegexpLoop|Normalise' -benchmem ./intent/
//
// One operation is a pass over the whole mix (every message of the
// evaluation set, eleven languages); msgs/s and MB/s are per message.

// benchMessages returns the texts of the evaluation set.
func benchMessages(b *testing.B) []string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "eval", "*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no evaluation files: %v", err)
	}
	var msgs []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var c struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, c.Text)
		}
		fh.Close()
	}
	return msgs
}

func totalBytes(msgs []string) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m))
	}
	return n
}

// reportMsgs adds msgs/s, and kB/s for rates too slow for MB/s to show.
func reportMsgs(b *testing.B, msgs []string) {
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(len(msgs))*float64(b.N)/secs, "msgs/s")
	b.ReportMetric(float64(totalBytes(msgs))*float64(b.N)/secs/1e3, "kB/s")
}

// BenchmarkDetect is the mode's real path: normalise, one Aho–Corasick pass
// over all packs, boundary checks, ignores, combos, capability rules.
func BenchmarkDetect(b *testing.B) {
	d := detector(b)
	msgs := benchMessages(b)
	b.SetBytes(totalBytes(msgs))
	opened := 0
	b.ResetTimer()
	for b.Loop() {
		opened = 0
		for _, m := range msgs {
			opened += len(d.Detect(intent.Input{Text: m}).Targets)
		}
	}
	reportMsgs(b, msgs)
	b.ReportMetric(float64(opened), "targets/op")
}

// BenchmarkNormalise is the share of Detect spent normalising.
func BenchmarkNormalise(b *testing.B) {
	msgs := benchMessages(b)
	b.SetBytes(totalBytes(msgs))
	b.ResetTimer()
	for b.Loop() {
		for _, m := range msgs {
			intent.Normalise(m)
		}
	}
	reportMsgs(b, msgs)
}

// BenchmarkRegexpLoop is the naive alternative: one compiled regular
// expression per phrase of every pack (triggers, combo words, ignores,
// follow-ups), `(?i)\bphrase\b` with `\s+` between words and no end
// boundary after a prefix, each run over the normalised message. It only
// finds phrases; Detect also applies ignores, combos and the rest. (RE2's
// \b is ASCII-only, so this loop even misses Cyrillic and Vietnamese
// phrases: it is a speed baseline, not a matcher.)
func BenchmarkRegexpLoop(b *testing.B) {
	packs, err := intent.BuiltinPacks()
	if err != nil {
		b.Fatal(err)
	}
	var res []*regexp.Regexp
	add := func(phrase string) {
		res = append(res, naiveRegexp(phrase))
	}
	for _, p := range packs {
		for _, phrases := range p.Triggers {
			for _, ph := range phrases {
				add(ph)
			}
		}
		for _, c := range p.Combos {
			for _, ph := range append(append([]string(nil), c.Verbs...), c.Nouns...) {
				add(ph)
			}
		}
		for _, ph := range append(append([]string(nil), p.Ignore...), p.Followups...) {
			add(ph)
		}
	}
	// Every fourth message of the mix: a pass over all of them takes
	// seconds, and msgs/s and MB/s are per message anyway.
	var msgs []string
	for i, m := range benchMessages(b) {
		if i%4 == 0 {
			msgs = append(msgs, m)
		}
	}
	b.SetBytes(totalBytes(msgs))
	found := 0
	b.ResetTimer()
	for b.Loop() {
		found = 0
		for _, m := range msgs {
			text := intent.Normalise(m)
			for _, re := range res {
				if re.MatchString(text) {
					found++
				}
			}
		}
	}
	reportMsgs(b, msgs)
	b.ReportMetric(float64(len(res)), "regexps")
	b.ReportMetric(float64(found), "hits/op")
}

// naiveRegexp compiles a phrase the way a regex loop would: word
// boundaries around spaced-script phrases, none around CJK ones.
func naiveRegexp(phrase string) *regexp.Regexp {
	p := intent.Normalise(phrase)
	prefix := strings.HasSuffix(p, "*")
	p = strings.TrimSuffix(p, "*")
	words := strings.Fields(p)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	body := strings.Join(words, `\s+`)
	cjk := strings.IndexFunc(p, func(r rune) bool { return r >= 0x2E80 }) >= 0
	switch {
	case cjk:
		return regexp.MustCompile(`(?i)` + body)
	case prefix:
		return regexp.MustCompile(`(?i)\b` + body)
	}
	return regexp.MustCompile(`(?i)\b` + body + `\b`)
}

// BenchmarkDetectWithClassifier is BenchmarkDetect with the learned
// stage judging every message beside the packs, as quiver serve runs it.
func BenchmarkDetectWithClassifier(b *testing.B) {
	c, err := intent.BuiltinClassifier()
	if err != nil {
		b.Fatal(err)
	}
	d := detector(b).WithClassifier(c, 0)
	msgs := benchMessages(b)
	b.SetBytes(totalBytes(msgs))
	b.ResetTimer()
	for b.Loop() {
		for _, m := range msgs {
			d.Detect(intent.Input{Text: m})
		}
	}
	reportMsgs(b, msgs)
}
