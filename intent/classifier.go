package intent

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
)

// SourceClassifier is the Source of a match the learned stage made; its
// Trigger gives the score ("score 0.93").
const SourceClassifier = "classifier"

// Classifier is Deliberate Tool Mode's learned stage, beside the phrase
// packs: a logistic regression per family over hashed features of the
// message (see features), trained by `go run ./intent/train` from the
// labelled corpus under testdata/corpus, its weights committed as
// classifier.bin and embedded. With the packs it decides in two ways: a
// family opens when its score reaches the family's threshold, whatever
// the packs found; and a phrase of a pack opens its family only when the
// message's score as a request (anyRequest: does it ask for anything?)
// reaches the family's veto, so that "I searched all day for my keys"
// does not open search on the word alone.
// Both are chosen on the corpus's validation split. Custom triggers are
// a community's own and never vetoed. It is immutable and safe for
// concurrent use.
type Classifier struct {
	bits   uint
	labels []string
	// Per label: the bias, the threshold and the veto (probabilities)
	// and the weights' scale.
	bias, threshold, veto, scale []float32
	// rows holds the weights, one signed byte per bucket and label,
	// bucket by bucket (label i of bucket b at b*len(labels)+i): a
	// feature's weights for every label are adjacent, so scoring all
	// labels reads one cache line per feature.
	rows []int8
	// thZ and vetoZ are the thresholds and vetoes as logits (shift 0),
	// so judge compares a label's logit with its bar and computes a
	// probability only for what it reports; set by prepare.
	thZ, vetoZ []float64
}

// prepare computes thZ and vetoZ from the bars.
func (c *Classifier) prepare() {
	c.thZ, c.vetoZ = make([]float64, len(c.labels)), make([]float64, len(c.labels))
	for i := range c.labels {
		c.thZ[i], c.vetoZ[i] = barLogit(c.threshold[i], 0), barLogit(c.veto[i], 0)
	}
}

// barLogit is the logit of bar(t, shift): z ≥ barLogit(t, shift) exactly
// when sigmoid(z) ≥ bar(t, shift), up to the last bit of rounding.
func barLogit(t float32, shift float64) float64 {
	b := bar(t, shift)
	return math.Log(b / (1 - b))
}

// classifierMagic starts the weights file, with its format's version.
const classifierMagic = "QDTMC4\n"

// maxClassifierBits bounds the buckets a weights file may declare.
const maxClassifierBits = 20

//go:embed classifier.bin
var builtinClassifier []byte

var (
	builtinOnce sync.Once
	builtin     *Classifier
	builtinErr  error
)

// BuiltinClassifier returns the classifier whose weights ship in the
// binary.
func BuiltinClassifier() (*Classifier, error) {
	builtinOnce.Do(func() { builtin, builtinErr = ParseClassifier(builtinClassifier) })
	return builtin, builtinErr
}

// anyRequest is the classifier's last label when it has one: whether a
// message asks for some family at all, whichever. It is what a veto is
// judged on: a pack's phrase already names the family, and "is this a
// request?" is learned from every request and every message needing
// none, so it holds for wordings no family's own examples cover
// ("search the web for cats" when no search example mentions cats).
const anyRequest = "*"

// Labels returns the families the classifier scores, in its order.
func (c *Classifier) Labels() []string {
	return slices.DeleteFunc(slices.Clone(c.labels), func(l string) bool { return l == anyRequest })
}

// requestIndex is the index of the anyRequest label, or -1.
func (c *Classifier) requestIndex() int { return slices.Index(c.labels, anyRequest) }

// Threshold returns the threshold and the veto of a family, and false
// for a family the classifier does not score.
func (c *Classifier) Threshold(label string) (threshold, veto float64, ok bool) {
	i := slices.Index(c.labels, label)
	if i < 0 || label == anyRequest {
		return 0, 0, false
	}
	return float64(c.threshold[i]), float64(c.veto[i]), true
}

// Score is one family's probability for a message.
type Score struct {
	Target string  `json:"family"`
	Score  float64 `json:"score"`
}

// Scores returns every family's score for text, in Labels order.
func (c *Classifier) Scores(text string) []Score {
	var buf [256]uint32
	fs := dedupe(features(buf[:0], scanText(text), c.bits))
	ps := c.probs(fs, nil)
	out := make([]Score, 0, len(c.labels))
	for i, l := range c.labels {
		if l != anyRequest {
			out = append(out, Score{Target: l, Score: ps[i]})
		}
	}
	return out
}

// probs appends every label's probability over the features' buckets
// to dst, in label order.
func (c *Classifier) probs(fs []uint32, dst []float64) []float64 {
	start := len(dst)
	dst = c.logits(fs, dst)
	for i := start; i < len(dst); i++ {
		dst[i] = sigmoid(dst[i])
	}
	return dst
}

// logits appends every label's logit (probs before the logistic
// function) to dst, in label order.
func (c *Classifier) logits(fs []uint32, dst []float64) []float64 {
	n := len(c.labels)
	var small [32]int32
	sums := small[:0]
	if n > len(small) {
		sums = make([]int32, n)
	} else {
		sums = small[:n]
	}
	for _, f := range fs {
		row := c.rows[int(f)*n : int(f)*n+n]
		for i, w := range row {
			sums[i] += int32(w)
		}
	}
	for i, sum := range sums {
		dst = append(dst, float64(c.bias[i])+float64(float64(sum)*float64(c.scale[i]))*featureNorm(len(fs)))
	}
	return dst
}

// judge applies the classifier to norm, a normalised message
// (scanText), and the matches the packs and custom triggers made of it:
// it drops each pack match whose message scores under its family's veto
// as a request (anyRequest; the family's own score for weights trained
// without it), and adds
// a match for each family among known scoring at or above its threshold
// plus shift (a community's adjustment, see MaxShift; positive opens
// less) that no match kept opens. Families outside known are not
// scored.
func (c *Classifier) judge(norm string, ms []Match, known func(string) bool, shift float64) []Match {
	var buf [256]uint32
	fs := dedupe(features(buf[:0], norm, c.bits))
	var zbuf [32]float64
	zs := c.logits(fs, zbuf[:0])
	thZ, vetoZ := func(i int) float64 { return c.thZ[i] }, func(i int) float64 { return c.vetoZ[i] }
	if shift != 0 {
		thZ = func(i int) float64 { return barLogit(c.threshold[i], shift) }
		vetoZ = func(i int) float64 { return barLogit(c.veto[i], shift) }
	}
	req := c.requestIndex()
	ms = slices.DeleteFunc(ms, func(m Match) bool {
		if m.Source != SourcePack {
			return false
		}
		i := slices.Index(c.labels, m.Target)
		if i < 0 {
			return false
		}
		z := zs[i]
		if req >= 0 {
			z = zs[req]
		}
		return z < vetoZ(i)
	})
	for i, l := range c.labels {
		// !(z >= bar), not z < bar: a NaN fails closed.
		if i == req || !(zs[i] >= thZ(i)) || !known(l) || slices.ContainsFunc(ms, func(m Match) bool { return m.Target == l }) {
			continue
		}
		ms = append(ms, Match{Target: l, Trigger: "score " + strconv.FormatFloat(sigmoid(zs[i]), 'f', 2, 64), Source: SourceClassifier})
	}
	return ms
}

// bar is a threshold moved by shift, kept inside (0, 1).
func bar(t float32, shift float64) float64 { return min(0.999, max(0.001, float64(t)+shift)) }

// MarshalBinary encodes the classifier as its weights file: the magic,
// the bucket bits, the labels, then per label its bias, threshold, veto,
// scale and weights, little-endian. The same classifier gives the same bytes.
func (c *Classifier) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(classifierMagic)
	b.WriteByte(byte(c.bits))
	b.WriteByte(byte(len(c.labels)))
	for _, l := range c.labels {
		b.WriteByte(byte(len(l)))
		b.WriteString(l)
	}
	for i := range c.labels {
		for _, f := range []float32{c.bias[i], c.threshold[i], c.veto[i], c.scale[i]} {
			_ = binary.Write(&b, binary.LittleEndian, math.Float32bits(f))
		}
		for j := i; j < len(c.rows); j += len(c.labels) {
			b.WriteByte(byte(c.rows[j]))
		}
	}
	return b.Bytes(), nil
}

// ParseClassifier reads a weights file (MarshalBinary's), refusing one
// that is truncated, oversized or malformed.
func ParseClassifier(data []byte) (*Classifier, error) {
	r := bytes.NewReader(data)
	magic := make([]byte, len(classifierMagic))
	if _, err := r.Read(magic); err != nil || string(magic) != classifierMagic {
		return nil, errors.New("intent: not a classifier weights file")
	}
	bits, err1 := r.ReadByte()
	n, err2 := r.ReadByte()
	if err := errors.Join(err1, err2); err != nil || bits == 0 || bits > maxClassifierBits || n == 0 {
		return nil, errors.New("intent: classifier weights: bad header")
	}
	c := &Classifier{bits: uint(bits)}
	for range n {
		l, err := r.ReadByte()
		if err != nil || l == 0 {
			return nil, errors.New("intent: classifier weights: bad label")
		}
		name := make([]byte, l)
		if _, err := r.Read(name); err != nil || len(name) != int(l) {
			return nil, errors.New("intent: classifier weights: truncated label")
		}
		c.labels = append(c.labels, string(name))
	}
	size := 1 << bits
	if r.Len() != len(c.labels)*(16+size) {
		return nil, fmt.Errorf("intent: classifier weights: %d bytes of weights, want %d", r.Len(), len(c.labels)*(16+size))
	}
	nl := len(c.labels)
	c.rows = make([]int8, size*nl)
	raw := make([]byte, size)
	for i := range c.labels {
		var f [4]uint32
		if err := binary.Read(r, binary.LittleEndian, &f); err != nil {
			return nil, err
		}
		bias, th, veto, scale := math.Float32frombits(f[0]), math.Float32frombits(f[1]), math.Float32frombits(f[2]), math.Float32frombits(f[3])
		if !finite(bias) || !(th > 0 && th < 1) || !(veto >= 0 && veto < 1) || !(scale >= 0) || !finite(scale) {
			return nil, errors.New("intent: classifier weights: bad numbers")
		}
		if _, err := r.Read(raw); err != nil {
			return nil, err
		}
		for j, x := range raw {
			c.rows[j*nl+i] = int8(x)
		}
		c.bias, c.threshold, c.veto, c.scale = append(c.bias, bias), append(c.threshold, th), append(c.veto, veto), append(c.scale, scale)
	}
	c.prepare()
	return c, nil
}

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }
