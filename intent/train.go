package intent

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Example is one labelled message of the corpus: its text and the
// families it needs (none for chat and near misses).
type Example struct {
	Text   string
	Labels []string
}

// TrainOptions are the knobs of Train; the zero value means the
// defaults, which are what `go run ./intent/train` uses.
type TrainOptions struct {
	// Bits is log2 of the feature buckets (default 17: 131,072 buckets,
	// one byte per family each, so about 2.5 MB for 19 families; with
	// the grown corpus, 16 bits lost about a point of recall to
	// collisions at the same false opens).
	Bits uint
	// Epochs over the training set (default 30).
	Epochs int
	// Seed orders the examples of each epoch (default 1).
	Seed uint64
	// L2 is the weight decay per update (default 2e-3).
	L2 float64
	// MaxPositiveWeight caps how much a family's positive example counts
	// against a negative one (default 5).
	MaxPositiveWeight float64
	// Rate is the starting learning rate (default 4: the features'
	// weights are summed scaled by featureNorm, about a tenth).
	//
	// The defaults of L2, MaxPositiveWeight and Rate were chosen on the
	// validation split at 3% false opens: 74.6% recall, against 70.3%
	// for 3e-3, 3 and 2, and 68.6–73.8% for the other settings tried.
	Rate float64
	// Packs, when set, is the phrase-pack detector the classifier will
	// judge beside: the vetoes are chosen against its matches on the
	// validation split. Nil chooses no veto.
	Packs *Detector
	// MaxFalseOpen is the share of the validation split's messages
	// needing no family that may open one, which the thresholds are
	// chosen for (default 0.03).
	MaxFalseOpen float64
}

func (o TrainOptions) withDefaults() TrainOptions {
	if o.Bits == 0 {
		o.Bits = 17
	}
	if o.Epochs == 0 {
		o.Epochs = 30
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.L2 == 0 {
		o.L2 = 2e-3
	}
	if o.MaxPositiveWeight == 0 {
		o.MaxPositiveWeight = 5
	}
	if o.Rate == 0 {
		o.Rate = 4
	}
	if o.MaxFalseOpen == 0 {
		o.MaxFalseOpen = 0.03
	}
	return o
}

// Train fits the classifier on train and chooses its thresholds on
// validation. It is deterministic: the same examples, in the same order,
// with the same options give a classifier with the same bytes on every
// platform (every product is rounded to float64 before it is added, and
// the logistic function is computed from IEEE operations alone, sigmoid,
// so no platform's fused multiply-add changes a weight).
//
// Each family is a logistic regression over the shared features (their
// weights summed and scaled by featureNorm, so a message is a unit
// vector and its length alone does not raise a score),
// trained by stochastic gradient descent with a decaying rate and a
// little L2 decay, its positive examples weighted up to balance a
// family's few requests against the many messages that are not; one
// more regression, anyRequest, learns whether a message asks for any
// family, and a pack's phrase is vetoed on its score. The bars: each
// family's veto drops the most of its phrases' wrong opens for the
// fewest right ones, its threshold starts at the score that best separates its
// validation examples (its F1), then, until the messages needing no
// family that open some family are at most MaxFalseOpen of them, the
// bars of the family whose next step up loses the fewest right opens
// per wrong open it removes are raised (the threshold, and once it is
// at the top, the veto).
func Train(train, validation []Example, o TrainOptions) *Classifier {
	o = o.withDefaults()
	labels := append(corpusLabels(train), anyRequest)
	size := 1 << o.Bits
	feats := make([][]uint32, len(train))
	for i, ex := range train {
		feats[i] = dedupe(features(nil, scanText(ex.Text), o.Bits))
	}
	w := make([][]float64, len(labels))
	bias := make([]float64, len(labels))
	for i := range w {
		w[i] = make([]float64, size)
	}
	pos := make([]float64, len(labels))
	for _, ex := range train {
		for i, l := range labels {
			if ex.wants(l) {
				pos[i]++
			}
		}
	}
	order := make([]int, len(train))
	for i := range order {
		order[i] = i
	}
	rate0, decay := o.Rate, o.L2
	step := 0
	for epoch := range o.Epochs {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(epoch)))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			step++
			rate := rate0 / (1 + float64(step)/float64(len(train)*4))
			fs := feats[k]
			for i, l := range labels {
				z := 0.0
				for _, f := range fs {
					z += w[i][f]
				}
				nrm := featureNorm(len(fs))
				z = bias[i] + float64(z*nrm)
				p := sigmoid(z)
				y, weight := 0.0, 1.0
				if train[k].wants(l) {
					y = 1
					weight = math.Min(o.MaxPositiveWeight, math.Sqrt(float64(len(train))/math.Max(1, pos[i])))
				}
				g := float64((p - y) * weight)
				for _, f := range fs {
					w[i][f] -= float64(rate * float64(float64(g*nrm)+float64(decay*w[i][f])))
				}
				bias[i] -= float64(rate * g)
			}
		}
	}
	c := &Classifier{bits: o.Bits, labels: labels, rows: make([]int8, size*len(labels))}
	for i := range labels {
		peak := 0.0
		for _, x := range w[i] {
			peak = math.Max(peak, math.Abs(x))
		}
		scale := peak / 127
		if scale > 0 {
			for j, x := range w[i] {
				c.rows[j*len(labels)+i] = int8(math.Max(-127, math.Min(127, math.Round(x/scale))))
			}
		}
		c.bias = append(c.bias, float32(bias[i]))
		c.scale = append(c.scale, float32(scale))
	}
	c.threshold, c.veto = chooseBars(c, validation, o.Packs, o.MaxFalseOpen)
	c.prepare()
	return c
}

// wants reports whether the example is positive for label l: it needs
// family l, or, for anyRequest, some family.
func (ex Example) wants(l string) bool {
	if l == anyRequest {
		return len(ex.Labels) > 0
	}
	return slices.Contains(ex.Labels, l)
}

// corpusLabels are the families the examples name, sorted.
func corpusLabels(exs []Example) []string {
	var out []string
	for _, ex := range exs {
		for _, l := range ex.Labels {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// dedupe sorts fs and drops repeats: a feature counts once per message.
func dedupe(fs []uint32) []uint32 {
	slices.Sort(fs)
	return slices.Compact(fs)
}

// thresholdSteps are the thresholds chooseThresholds considers.
var thresholdSteps = func() []float32 {
	var out []float32
	for t := 0.05; t < 0.995; t += 0.01 {
		out = append(out, float32(math.Round(t*100)/100))
	}
	return out
}()

// valScores are the validation split as chooseBars reads it: per
// example, each label's score and whether a pack's phrase opens it.
type valScores struct {
	req   int // the anyRequest label's index, whose score a veto judges (-1: the family's own)
	score [][]float64
	pack  [][]bool
	want  [][]bool
	none  []bool // the example needs no family
}

// open is the decision of judge for example k and label i.
func (v valScores) open(k, i int, th, veto float32) bool {
	return v.score[k][i] >= float64(th) || (v.pack[k][i] && v.vetoScore(k, i) >= float64(veto))
}

// vetoScore is the score example k's pack match for label i is vetoed on.
func (v valScores) vetoScore(k, i int) float64 {
	if v.req >= 0 {
		return v.score[k][v.req]
	}
	return v.score[k][i]
}

// opensAny reports whether example k opens some label under the bars.
func (v valScores) opensAny(k int, th, veto []float32) bool {
	for i := range th {
		if i != v.req && v.open(k, i, th[i], veto[i]) {
			return true
		}
	}
	return false
}

// chooseBars picks each family's threshold and veto on the validation
// examples (see Train): the veto that drops the most of the packs'
// false opens at the cost of the fewest of their true ones (a true one
// lost counting twice), then the threshold with the best F1 of the
// combined decision, then, while more than maxFalseOpen of the messages
// needing no family open one, the bars of the family whose next step
// up costs the fewest right opens per wrong open removed (nextStep).
func chooseBars(c *Classifier, val []Example, packs *Detector, maxFalseOpen float64) (th, veto []float32) {
	v := valScores{req: c.requestIndex(), score: make([][]float64, len(val)), pack: make([][]bool, len(val)), want: make([][]bool, len(val)), none: make([]bool, len(val))}
	negatives := 0
	for k, ex := range val {
		norm := scanText(ex.Text)
		fs := dedupe(features(nil, norm, c.bits))
		v.pack[k], v.want[k] = make([]bool, len(c.labels)), make([]bool, len(c.labels))
		var ms []Match
		if packs != nil {
			ms, _ = packs.direct(ex.Text, nil, 0)
		}
		v.score[k] = c.probs(fs, nil)
		for i, l := range c.labels {
			v.pack[k][i] = slices.ContainsFunc(ms, func(m Match) bool { return m.Target == l && m.Source == SourcePack })
			v.want[k][i] = slices.Contains(ex.Labels, l)
		}
		v.none[k] = len(ex.Labels) == 0
		if v.none[k] {
			negatives++
		}
	}
	top := thresholdSteps[len(thresholdSteps)-1]
	th, veto = make([]float32, len(c.labels)), make([]float32, len(c.labels))
	for i := range c.labels {
		if i == v.req {
			th[i] = top // never a family: its bars are not used
			continue
		}
		veto[i] = bestVeto(v, i)
		th[i] = bestF1(v, i, veto[i])
	}
	for negatives > 0 {
		opened := 0
		for k := range val {
			if v.none[k] && v.opensAny(k, th, veto) {
				opened++
			}
		}
		if float64(opened) <= maxFalseOpen*float64(negatives) {
			break
		}
		// Raise the family whose next effective step loses the fewest
		// right opens per wrong open it removes.
		best, bestTh, bestVeto, bestCost := -1, float32(0), float32(0), math.Inf(1)
		for i := range c.labels {
			if i == v.req {
				continue
			}
			for _, bars := range [...]bool{true, false} {
				nt, nv, removed, lost, ok := v.nextStep(i, th[i], veto[i], top, bars)
				if !ok {
					continue
				}
				if cost := float64(lost) / float64(removed); cost < bestCost {
					best, bestTh, bestVeto, bestCost = i, nt, nv, cost
				}
			}
		}
		if best < 0 {
			return th, veto // nothing left to raise
		}
		th[best], veto[best] = bestTh, bestVeto
	}
	return th, veto
}

// nextStep walks one of label i's bars up from (th, veto) — the
// threshold when threshold is set, else the veto, which never passes the
// threshold — to the first bars that open it for fewer messages needing
// no family; it returns them, how many such messages they stop opening
// it for, how many of its right opens they lose, and false when no step
// up removes a wrong open.
func (v valScores) nextStep(i int, th, veto, top float32, threshold bool) (nt, nv float32, removed, lost int, ok bool) {
	count := func(t, ve float32) (wrong, right int) {
		for k := range v.score {
			if !v.open(k, i, t, ve) {
				continue
			}
			switch {
			case v.none[k]:
				wrong++
			case v.want[k][i]:
				right++
			}
		}
		return wrong, right
	}
	wrong0, right0 := count(th, veto)
	if wrong0 == 0 {
		return 0, 0, 0, 0, false
	}
	nt, nv = th, veto
	for {
		switch {
		case threshold && nt < top:
			nt = step(nt)
		case !threshold && nv < min(nt, maxVeto):
			nv = step(nv)
		default:
			return 0, 0, 0, 0, false
		}
		if w, r := count(nt, nv); w < wrong0 {
			return nt, nv, wrong0 - w, right0 - r, true
		}
	}
}

// maxVeto bounds how far chooseBars raises a veto, which is judged on
// the message's anyRequest score: a pack's phrase is an explicit request
// ("search the web for cats") far more often than not, so a phrase is
// never asked for more than 90% certainty that the message asks for
// something. (A veto is also raised no higher than the family's
// threshold in the false-open loop, nextStep: a rule from when both
// bars were on the family's own score, kept for the weights measured
// with it.)
const maxVeto = 0.9

// step is t raised by 0.01, on the grid.
func step(t float32) float32 { return float32(math.Round(float64(t)*100+1) / 100) }

// bestVeto is the veto for label i: over the examples a pack opens i
// for, the bar in [0, maxVeto] maximising the wrong opens it drops minus
// twice the right ones (the lowest of equals, so 0 when nothing is
// gained).
func bestVeto(v valScores, i int) float32 {
	best, bestGain := float32(0), 0
	for _, t := range append([]float32{0}, thresholdSteps...) {
		if t > maxVeto {
			break
		}
		gain := 0
		for k := range v.score {
			if !v.pack[k][i] || v.vetoScore(k, i) >= float64(t) {
				continue
			}
			if v.want[k][i] {
				gain -= 2
			} else {
				gain++
			}
		}
		if gain > bestGain {
			best, bestGain = t, gain
		}
	}
	return best
}

// bestF1 is the threshold with the best F1 of the combined decision for
// label i, given its veto (the lowest of equals; 0.5 when the
// validation split has no example of the family).
func bestF1(v valScores, i int, veto float32) float32 {
	best, bestF := float32(0.5), -1.0
	if !slices.ContainsFunc(v.want, func(w []bool) bool { return w[i] }) {
		return best
	}
	for _, t := range thresholdSteps {
		tp, fp, fn := 0, 0, 0
		for k := range v.score {
			want, got := v.want[k][i], v.open(k, i, t, veto)
			switch {
			case want && got:
				tp++
			case got:
				fp++
			case want:
				fn++
			}
		}
		f := 0.0
		if tp > 0 {
			f = 2 * float64(tp) / float64(2*tp+fp+fn)
		}
		if f > bestF {
			best, bestF = t, f
		}
	}
	return best
}
