package intent

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/embed"
)

// SourceSemantic is the Source of a match the semantic stage made; its
// Trigger gives the similarity ("similarity 0.83").
const SourceSemantic = "semantic"

// Exemplar is one example message of the semantic stage: a request for
// Family, or, with Family "", a message that needs no family (a hard
// negative, which calibrates the stage's bars for each model).
type Exemplar struct {
	Family string `json:"family,omitempty"`
	Text   string `json:"text"`
}

// Semantic stage defaults.
const (
	// DefaultSemanticTimeout bounds the one Embed call per turn.
	DefaultSemanticTimeout = 2 * time.Second
	// DefaultSemanticModels is how many models' exemplar vectors are
	// kept.
	DefaultSemanticModels = 4
	// DefaultSemanticFalseOpen is the share of the negative exemplars a
	// model's bars may open a family for (see NewSemantic), chosen on
	// the corpus's validation split with embed.Local.
	DefaultSemanticFalseOpen = 0.03
	// exemplarTimeout bounds embedding a model's exemplars, which runs
	// once per model, apart from any turn.
	exemplarTimeout = 2 * time.Minute
	// exemplarRetry is how long a model whose exemplars failed to embed
	// is left before they are tried again.
	exemplarRetry = time.Minute
	// maxExemplars bounds an exemplar set: one Embed call takes them.
	maxExemplars = embed.MaxTexts
	// semanticMaxBytes bounds how much of a message is embedded.
	semanticMaxBytes = 2 << 10
)

//go:embed exemplars.jsonl
var builtinExemplars []byte

// BuiltinExemplars returns the exemplars that ship in the binary: at
// most ExemplarsPerFamily requests per family and the negatives, picked
// from the corpus's train split (TestExemplarsAreFromTheTrainSplit).
func BuiltinExemplars() ([]Exemplar, error) { return ParseExemplars(builtinExemplars) }

var (
	builtinSemanticOnce sync.Once
	builtinSemantic     *Semantic
	builtinSemanticErr  error
)

// BuiltinSemantic returns the process's semantic stage over
// BuiltinExemplars with the default options, one value, so every
// engine shares its exemplar vectors.
func BuiltinSemantic() (*Semantic, error) {
	builtinSemanticOnce.Do(func() {
		xs, err := BuiltinExemplars()
		if err != nil {
			builtinSemanticErr = err
			return
		}
		builtinSemantic, builtinSemanticErr = NewSemantic(xs, SemanticOptions{})
	})
	return builtinSemantic, builtinSemanticErr
}

// ExemplarsPerFamily bounds the built-in exemplars of one family.
const ExemplarsPerFamily = 24

// ParseExemplars reads exemplars, one JSON object a line ({"family",
// "text"}); an unknown family, an empty or oversized text, or more than
// maxExemplars lines is an error naming the line.
func ParseExemplars(data []byte) ([]Exemplar, error) {
	var out []Exemplar
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxCorpusLine)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var x Exemplar
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&x); err != nil {
			return nil, fmt.Errorf("exemplars:%d: %w", n, err)
		}
		switch {
		case x.Family != "" && !slices.Contains(CorpusFamilies, x.Family):
			return nil, fmt.Errorf("exemplars:%d: unknown family %q", n, x.Family)
		case strings.TrimSpace(x.Text) == "" || len(x.Text) > semanticMaxBytes:
			return nil, fmt.Errorf("exemplars:%d: a text of 1 to %d bytes", n, semanticMaxBytes)
		case len(out) == maxExemplars:
			return nil, fmt.Errorf("exemplars: more than %d", maxExemplars)
		}
		out = append(out, x)
	}
	return out, sc.Err()
}

// SemanticOptions configure a Semantic stage; the zero value takes the
// defaults.
type SemanticOptions struct {
	// Timeout bounds the Embed call of one message (DefaultSemanticTimeout).
	Timeout time.Duration
	// Models is how many models' exemplar vectors are kept
	// (DefaultSemanticModels); the least recently used goes first.
	Models int
	// FalseOpen is the share of the negative exemplars the bars may
	// open a family for (DefaultSemanticFalseOpen).
	FalseOpen float64
	// Margin is how much more similar to a family's nearest exemplar
	// than to the nearest negative one a message must be for the
	// family to open.
	Margin float64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Semantic is Deliberate Tool Mode's optional semantic stage: with an
// organisation's embedding model it compares the message with each
// family's exemplars, a family's score being the highest cosine
// similarity to one of them, and opens a family when its score reaches
// its bar and its nearest exemplar is at least as near as the nearest
// negative one (plus Margin). The bars are the model's own: cosines
// differ from model to model, so when a model's exemplars are first
// embedded each family's bar is raised from 0 until at most FalseOpen of
// the negative exemplars open any family (the rule the classifier's
// bars follow on the validation split). It is safe for concurrent use.
type Semantic struct {
	families  []string // in Targets order
	exemplars []Exemplar
	texts     []string
	o         SemanticOptions

	mu     sync.Mutex
	models []*semanticModel // most recently used last
}

// semanticModel is one model's exemplar vectors and bars; ready closes
// when they are computed (or failed).
type semanticModel struct {
	key   string
	ready chan struct{}
	// Set before ready closes: the exemplars' vectors in their stored
	// form (a byte a dimension), and the bars.
	vecs   []embed.Packed
	bars   map[string]float64
	err    error
	failed time.Time
}

// NewSemantic returns a semantic stage over exemplars (BuiltinExemplars);
// it needs at least one request exemplar.
func NewSemantic(exemplars []Exemplar, o SemanticOptions) (*Semantic, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultSemanticTimeout
	}
	if o.Models <= 0 {
		o.Models = DefaultSemanticModels
	}
	if o.FalseOpen <= 0 {
		o.FalseOpen = DefaultSemanticFalseOpen
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if len(exemplars) > maxExemplars {
		return nil, fmt.Errorf("intent: %d exemplars, at most %d", len(exemplars), maxExemplars)
	}
	s := &Semantic{exemplars: slices.Clone(exemplars), o: o}
	for _, t := range Targets {
		if slices.ContainsFunc(exemplars, func(x Exemplar) bool { return x.Family == t }) {
			s.families = append(s.families, t)
		}
	}
	if len(s.families) == 0 {
		return nil, errors.New("intent: no request exemplar")
	}
	for _, x := range exemplars {
		s.texts = append(s.texts, x.Text)
	}
	return s, nil
}

// Families returns the families the stage scores, in Targets order.
func (s *Semantic) Families() []string { return slices.Clone(s.families) }

// Scores returns each family's score for text under e, in Families
// order, with its bar for e's model. Within the stage's timeout it
// waits for e's exemplars (embedded on the model's first use, apart
// from the caller; for embed.Local, which needs no network, it waits
// for them outside the timeout) and embeds text in one Embed call.
func (s *Semantic) Scores(ctx context.Context, e embed.Embedder, text string) ([]SemanticScore, error) {
	text = semanticText(text)
	if text == "" {
		return nil, nil
	}
	var (
		m   *semanticModel
		err error
	)
	if e.Model().Ref == embed.LocalRef {
		// Local exemplars are a fraction of a second of this process's
		// work, with nothing to wait for on a network: the turn waits
		// for them, so a process's first turn is judged like the others.
		if m, err = s.model(ctx, e); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	if m == nil {
		if m, err = s.model(ctx, e); err != nil {
			return nil, err
		}
	}
	vs, err := e.Embed(ctx, []string{text}, embed.Query)
	if err != nil {
		return nil, fmt.Errorf("embed the message: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) != m.vecs[0].Dims() {
		return nil, fmt.Errorf("embed the message: %d vectors of %d dimensions, want one of %d", len(vs), dims(vs), m.vecs[0].Dims())
	}
	sims := make([]float64, len(m.vecs))
	for i, v := range m.vecs {
		sims[i] = float64(v.Cosine(vs[0]))
	}
	best := s.best(sims, -1)
	out := make([]SemanticScore, len(s.families))
	for i, f := range s.families {
		out[i] = SemanticScore{Target: f, Score: best[f], Bar: m.bars[f], Open: s.opens(best, f, m.bars[f])}
	}
	return out, nil
}

// SemanticScore is one family's similarity to a message and its bar.
type SemanticScore struct {
	Target string  `json:"family"`
	Score  float64 `json:"score"`
	Bar    float64 `json:"bar"`
	// Open is whether the family opens: its score reaches its bar and
	// passes the nearest negative exemplar's by the stage's margin.
	Open bool `json:"open"`
}

// opens reports whether family f opens for a message whose best
// similarities per family (and "" for the negatives) are best, under bar.
func (s *Semantic) opens(best map[string]float64, f string, bar float64) bool {
	return best[f] >= bar && best[f] >= best[""]+s.o.Margin
}

// Match returns the matches of the families text opens under e that res
// has not opened, each with Source SourceSemantic and its similarity;
// a capability question (res opens capabilities) opens neither search
// nor memory, as with the packs. An error (no vectors, the model's
// answer late or refused) means the stage could not judge: the caller
// goes on without it.
func (s *Semantic) Match(ctx context.Context, e embed.Embedder, text string, res Result) ([]Match, error) {
	scores, err := s.Scores(ctx, e, text)
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, sc := range scores {
		switch {
		case !sc.Open || !validTarget(sc.Target) || res.Has(sc.Target):
			continue
		case res.Has(Capabilities) && (sc.Target == Search || sc.Target == Memory):
			continue
		}
		out = append(out, Match{Target: sc.Target, Trigger: "similarity " + strconv.FormatFloat(sc.Score, 'f', 2, 64), Source: SourceSemantic})
	}
	return out, nil
}

// With returns r with ms added: a match for a target and source r
// already has is dropped, and Targets stay in documentation order.
func (r Result) With(ms ...Match) Result {
	c := collector{matches: slices.Clone(r.Matches)}
	c.add(ms...)
	return c.result()
}

// best is each family's highest similarity among sims (one per
// exemplar), leaving out exemplar skip.
func (s *Semantic) best(sims []float64, skip int) map[string]float64 {
	out := make(map[string]float64, len(s.families))
	out[""] = -1
	for _, f := range s.families {
		out[f] = -1
	}
	for i, x := range s.exemplars {
		if i != skip && sims[i] > out[x.Family] {
			out[x.Family] = sims[i]
		}
	}
	return out
}

// model returns e's model's exemplar vectors and bars, embedding them on
// first use. The embedding runs apart from the caller (bounded by
// exemplarTimeout), so a turn that stops waiting does not waste it: the
// next turn finds it done. A failure is kept for exemplarRetry.
func (s *Semantic) model(ctx context.Context, e embed.Embedder) (*semanticModel, error) {
	// By ref: a remote model reports its dimension only once it has
	// answered, and a message's vector of another dimension is refused.
	key := e.Model().Ref
	s.mu.Lock()
	i := slices.IndexFunc(s.models, func(m *semanticModel) bool { return m.key == key })
	var m *semanticModel
	if i >= 0 {
		m = s.models[i]
		s.models = append(slices.Delete(s.models, i, i+1), m)
		select {
		case <-m.ready:
			if m.err != nil && s.o.Now().Sub(m.failed) >= exemplarRetry {
				m = nil // try again
				s.models = s.models[:len(s.models)-1]
			}
		default:
		}
	}
	if m == nil {
		m = &semanticModel{key: key, ready: make(chan struct{})}
		if len(s.models) >= s.o.Models {
			s.models = slices.Delete(s.models, 0, len(s.models)-s.o.Models+1)
		}
		s.models = append(s.models, m)
		go s.compute(context.WithoutCancel(ctx), e, m)
	}
	s.mu.Unlock()
	select {
	case <-m.ready:
		if m.err != nil {
			return nil, m.err
		}
		return m, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("embed the exemplars: %w", ctx.Err())
	}
}

// compute embeds the exemplars for m and chooses its bars.
func (s *Semantic) compute(ctx context.Context, e embed.Embedder, m *semanticModel) {
	defer close(m.ready)
	ctx, cancel := context.WithTimeout(ctx, exemplarTimeout)
	defer cancel()
	vecs, err := e.Embed(ctx, s.texts, embed.Query)
	switch {
	case err != nil:
		m.err = fmt.Errorf("embed the exemplars: %w", err)
	case len(vecs) != len(s.texts) || dims(vecs) == 0 || dims(vecs) > embed.MaxDims ||
		slices.ContainsFunc(vecs, func(v embed.Vector) bool { return len(v) != len(vecs[0]) }):
		m.err = fmt.Errorf("embed the exemplars: %d vectors for %d texts, or of different dimensions", len(vecs), len(s.texts))
	}
	if m.err != nil {
		m.failed = s.o.Now()
		return
	}
	m.bars = s.chooseBars(vecs)
	m.vecs = make([]embed.Packed, len(vecs))
	for i, v := range vecs {
		m.vecs[i] = embed.Pack(v)
	}
}

// chooseBars picks each family's bar for one model's exemplar vectors:
// every bar starts at 0 and, while more than FalseOpen of the negative
// exemplars open a family (each judged against the other exemplars),
// the bar of the family opening most of them rises by 0.01. Without
// negatives every bar is 0.5.
func (s *Semantic) chooseBars(vecs []embed.Vector) map[string]float64 {
	// at[n][i] is the highest bar at which negative n opens family i:
	// its similarity, or -2 (none) when another negative is nearer.
	var at [][]float64
	sims := make([]float64, len(vecs))
	for k, x := range s.exemplars {
		if x.Family != "" {
			continue
		}
		idx, val := nonZero(vecs[k])
		for i, v := range vecs {
			var dot float32
			for j, d := range idx {
				dot += val[j] * v[d]
			}
			sims[i] = float64(dot)
		}
		best := s.best(sims, k)
		row := make([]float64, len(s.families))
		for i, f := range s.families {
			row[i] = -2
			if s.opens(best, f, -1) {
				row[i] = best[f]
			}
		}
		at = append(at, row)
	}
	bars := make([]float64, len(s.families))
	if len(at) == 0 {
		for i := range bars {
			bars[i] = 0.5
		}
	}
	cost := make([]int, len(s.families))
	for len(at) > 0 {
		opened := 0
		clear(cost)
		for _, row := range at {
			any := false
			for i, b := range bars {
				if row[i] >= b {
					cost[i]++
					any = true
				}
			}
			if any {
				opened++
			}
		}
		if float64(opened) <= s.o.FalseOpen*float64(len(at)) {
			break
		}
		worst := -1
		for i, c := range cost {
			if bars[i] < 1 && c > 0 && (worst < 0 || c > cost[worst]) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		bars[worst] = math.Round(bars[worst]*100+1) / 100
	}
	out := make(map[string]float64, len(s.families))
	for i, f := range s.families {
		out[f] = bars[i]
	}
	return out
}

// nonZero returns v's non-zero components and their indices: a vector
// of hashed features (embed.Local's) has few, and the dot products of
// choosing the bars then cost a few dozen products each.
func nonZero(v embed.Vector) (idx []int, val []float32) {
	for i, x := range v {
		if x != 0 {
			idx, val = append(idx, i), append(val, x)
		}
	}
	return idx, val
}

// semanticText is the part of a message that is embedded: at most
// semanticMaxBytes, cut on a character boundary, trimmed.
func semanticText(text string) string {
	text = strings.ToValidUTF8(text, "")
	if len(text) > semanticMaxBytes {
		cut := semanticMaxBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	return strings.TrimSpace(text)
}

func dims(vs []embed.Vector) int {
	if len(vs) == 0 {
		return 0
	}
	return len(vs[0])
}
