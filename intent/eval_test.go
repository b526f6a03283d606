package intent_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/quiverhq/quiver/intent"
)

// The quality targets, over the whole labelled set and per language.
const (
	minRecall    = 0.95
	maxFalseOpen = 0.05
)

// evalCase is one labelled message of testdata/eval/<lang>.jsonl.
type evalCase struct {
	Text string `json:"text"`
	// Want are the targets the message needs; empty means it needs none
	// (chat, near misses, follow-ups with nothing to follow).
	Want []string `json:"want"`
	// Forbid are targets that must stay closed (search on a capability
	// question).
	Forbid       []string      `json:"forbid"`
	Kind         string        `json:"kind"`
	History      []evalMessage `json:"history"`
	Attachments  []string      `json:"attachments"`
	HistoryTurns int           `json:"history_turns"`

	lang string
	line int
}

type evalMessage struct {
	Role        string   `json:"role"`
	Text        string   `json:"text"`
	Attachments []string `json:"attachments"`
}

// evalGlob picks the files TestEval reads, to measure one batch alone:
// go test -run TestEval -v -evalglob '*.holdout.jsonl' ./intent/
var evalGlob = flag.String("evalglob", "*.jsonl", "glob of the evaluation files under testdata/eval")

var evalKinds = []string{"request", "followup", "capability", "chat", "nearmiss"}

// loadEval reads the testdata/eval files matching -evalglob; a file name
// up to its first dot is the language ("vi.jsonl", "vi.holdout.jsonl").
func loadEval(t *testing.T) []evalCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "eval", *evalGlob))
	if err != nil || len(files) == 0 {
		t.Fatalf("no evaluation files: %v", err)
	}
	var cases []evalCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lang, _, _ := strings.Cut(filepath.Base(f), ".")
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			c, err := parseEvalLine(sc.Bytes())
			if err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			c.lang, c.line = lang, n
			cases = append(cases, c)
		}
	}
	return cases
}

func parseEvalLine(line []byte) (evalCase, error) {
	var c evalCase
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, err
	}
	if !slices.Contains(evalKinds, c.Kind) {
		return c, fmt.Errorf("kind %q: want one of %v", c.Kind, evalKinds)
	}
	for _, target := range slices.Concat(c.Want, c.Forbid) {
		if !slices.Contains(intent.Targets, target) {
			return c, fmt.Errorf("unknown target %q", target)
		}
	}
	if (c.Kind == "chat" || c.Kind == "nearmiss") && len(c.Want) > 0 {
		return c, fmt.Errorf("a %s message wants nothing", c.Kind)
	}
	if (c.Kind == "request" || c.Kind == "capability") && len(c.Want) == 0 {
		return c, fmt.Errorf("a %s message wants a target", c.Kind)
	}
	return c, nil
}

func (c evalCase) input() intent.Input {
	in := intent.Input{Text: c.Text, Attachments: c.Attachments, HistoryTurns: c.HistoryTurns}
	for _, m := range c.History {
		in.History = append(in.History, intent.Message{Role: m.Role, Text: m.Text, Attachments: m.Attachments})
	}
	return in
}

// evalStats are one language's counts.
type evalStats struct {
	msgs            int
	needTool, found int // messages that need a tool; of those, fully served
	chat, opened    int // messages that need none; of those, opened something
	extra           int // tool messages that also opened an unwanted target
}

func (s evalStats) recall() float64    { return ratio(s.found, s.needTool, 1) }
func (s evalStats) falseOpen() float64 { return ratio(s.opened, s.chat, 0) }

func ratio(a, b int, empty float64) float64 {
	if b == 0 {
		return empty
	}
	return float64(a) / float64(b)
}

// TestEval measures the packs on the labelled set: recall on messages that
// need a tool (every wanted target opened, no forbidden one) and the share
// of messages needing none that opened anything. It fails below the
// issue's targets, overall and per language. Run with -v to print the
// table and the misses.
func TestEval(t *testing.T) {
	d := detector(t)
	stats := map[string]*evalStats{}
	var misses []string
	for _, c := range loadEval(t) {
		s := stats[c.lang]
		if s == nil {
			s = &evalStats{}
			stats[c.lang] = s
		}
		s.msgs++
		got := d.Detect(c.input()).Targets
		if len(c.Want) == 0 {
			s.chat++
			if len(got) > 0 {
				s.opened++
				misses = append(misses, fmt.Sprintf("%s:%d false open %v: %s", c.lang, c.line, got, c.Text))
			}
			continue
		}
		s.needTool++
		ok := !slices.ContainsFunc(c.Want, func(w string) bool { return !slices.Contains(got, w) }) &&
			!slices.ContainsFunc(c.Forbid, func(f string) bool { return slices.Contains(got, f) })
		if ok {
			s.found++
		} else {
			misses = append(misses, fmt.Sprintf("%s:%d miss want %v got %v: %s", c.lang, c.line, c.Want, got, c.Text))
		}
		if slices.ContainsFunc(got, func(g string) bool { return !slices.Contains(c.Want, g) }) {
			s.extra++
		}
	}
	table, total := evalTable(stats)
	t.Log("\n" + table)
	for _, m := range misses {
		t.Log(m)
	}
	if testing.Verbose() {
		fmt.Print(table)
	}
	check := func(name string, s evalStats) {
		if r := s.recall(); r < minRecall {
			t.Errorf("%s: recall %.1f%%, want at least %.0f%%", name, 100*r, 100*minRecall)
		}
		if f := s.falseOpen(); f > maxFalseOpen {
			t.Errorf("%s: false opens %.1f%%, want at most %.0f%%", name, 100*f, 100*maxFalseOpen)
		}
	}
	check("overall", total)
	for _, lang := range slices.Sorted(mapKeys(stats)) {
		check(lang, *stats[lang])
	}
}

// evalTable renders the per-language table and returns the totals.
func evalTable(stats map[string]*evalStats) (string, evalStats) {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "lang\tmsgs\tneed tool\trecall\tno tool\tfalse open\textra target\t")
	var total evalStats
	row := func(name string, s evalStats) {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.1f%%\t%d\t%.1f%%\t%d\t\n", name, s.msgs, s.needTool, 100*s.recall(), s.chat, 100*s.falseOpen(), s.extra)
	}
	for _, lang := range slices.Sorted(mapKeys(stats)) {
		s := *stats[lang]
		row(lang, s)
		total.msgs += s.msgs
		total.needTool += s.needTool
		total.found += s.found
		total.chat += s.chat
		total.opened += s.opened
		total.extra += s.extra
	}
	row("all", total)
	w.Flush()
	return b.String(), total
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return slices.Values(keys)
}
