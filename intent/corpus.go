package intent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// CorpusLine is one labelled message of the corpus under
// testdata/corpus/<split>/<lang>.jsonl (and of the older set under
// testdata/eval, which has more kinds).
type CorpusLine struct {
	Text string   `json:"text"`
	Want []string `json:"want"`
	Kind string   `json:"kind"`
	// Lang is the file's language, from its name up to the first dot.
	Lang string `json:"-"`
}

// corpusKinds are the kinds a corpus line may have.
var corpusKinds = []string{"request", "chat", "nearmiss", "capability", "followup"}

// maxCorpusLine bounds one line of a corpus file.
const maxCorpusLine = 64 << 10

// ReadCorpus reads the JSON-lines files of fsys matching pattern (a
// path.Match pattern, "testdata/corpus/train/*.jsonl"), in file-name
// order, and their lines in order. Unknown fields, unknown kinds and
// labels outside known are errors naming the file and line; a chat or
// near-miss line wants nothing and a request wants something.
func ReadCorpus(fsys fs.FS, pattern string, known []string) ([]CorpusLine, error) {
	files, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []CorpusLine
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		lang, _, _ := strings.Cut(path.Base(f), ".")
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, maxCorpusLine)
		for n := 1; sc.Scan(); n++ {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			l, err := parseCorpusLine(sc.Bytes(), known)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", f, n, err)
			}
			l.Lang = lang
			out = append(out, l)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return out, nil
}

// parseCorpusLine reads one line. Fields the older evaluation set has
// beyond text, want and kind (history, attachments, forbid) are accepted
// and ignored: the classifier reads the message alone.
func parseCorpusLine(line []byte, known []string) (CorpusLine, error) {
	var l struct {
		CorpusLine
		Forbid       []string        `json:"forbid"`
		History      json.RawMessage `json:"history"`
		Attachments  []string        `json:"attachments"`
		HistoryTurns int             `json:"history_turns"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return CorpusLine{}, err
	}
	c := l.CorpusLine
	switch {
	case strings.TrimSpace(c.Text) == "":
		return c, fmt.Errorf("no text")
	case !slices.Contains(corpusKinds, c.Kind):
		return c, fmt.Errorf("kind %q: want one of %v", c.Kind, corpusKinds)
	case (c.Kind == "chat" || c.Kind == "nearmiss") && len(c.Want) > 0:
		return c, fmt.Errorf("a %s line wants nothing", c.Kind)
	case (c.Kind == "request" || c.Kind == "capability") && len(c.Want) == 0:
		return c, fmt.Errorf("a %s line wants a family", c.Kind)
	}
	for _, w := range c.Want {
		if !slices.Contains(known, w) {
			return c, fmt.Errorf("unknown family %q", w)
		}
	}
	return c, nil
}

// CorpusFamilies are the families a corpus may label: the targets the
// packs open (but apps, which only custom triggers open); the classifier
// scores them all.
var CorpusFamilies = func() []string {
	var out []string
	for _, t := range Targets {
		if t != Apps {
			out = append(out, t)
		}
	}
	return out
}()

// ClassifierExamples turns corpus lines into training examples; a
// follow-up, whose families come from the conversation before it and
// not from its own words, is left out.
func ClassifierExamples(lines []CorpusLine) []Example {
	var out []Example
	for _, l := range lines {
		if l.Kind == "followup" {
			continue
		}
		out = append(out, Example{Text: l.Text, Labels: l.Want})
	}
	return out
}

// TrainFromCorpus trains the classifier as `go run ./intent/train` does,
// from the intent package's folder fsys: the train split and the older
// evaluation set for training, the validation split for the thresholds.
func TrainFromCorpus(fsys fs.FS) (*Classifier, error) {
	var train []CorpusLine
	for _, pattern := range []string{"testdata/corpus/train/*.jsonl", "testdata/eval/*.jsonl"} {
		lines, err := ReadCorpus(fsys, pattern, CorpusFamilies)
		if err != nil {
			return nil, err
		}
		train = append(train, lines...)
	}
	val, err := ReadCorpus(fsys, "testdata/corpus/validation/*.jsonl", CorpusFamilies)
	if err != nil {
		return nil, err
	}
	if len(train) == 0 {
		return nil, fmt.Errorf("no training examples")
	}
	packs, err := BuiltinPacks()
	if err != nil {
		return nil, err
	}
	return Train(ClassifierExamples(train), ClassifierExamples(val), TrainOptions{Packs: New(packs)}), nil
}
