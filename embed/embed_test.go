package embed_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/llm"
)

func TestCheckRefusesWhatNoProviderTakes(t *testing.T) {
	for _, c := range []struct {
		name  string
		texts []string
		want  string
	}{
		{"none", nil, "no text"},
		{"empty", []string{"a", ""}, "text 1 is empty"},
		{"too many", make([]string, embed.MaxTexts+1), "over the limit of 2048 per call"},
		{"too long", []string{strings.Repeat("a", embed.MaxTextBytes+1)}, "over the limit of 32768"},
		{"not UTF-8", []string{"ok", "\xff"}, "text 1 is not valid UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := embed.Check(c.texts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check = %v, want an error saying %q", err, c.want)
			}
		})
	}
	if err := embed.Check([]string{"a", strings.Repeat("b", embed.MaxTextBytes)}); err != nil {
		t.Fatalf("Check of texts within the limits: %v", err)
	}
}

func localVector(t *testing.T, text string) embed.Vector {
	t.Helper()
	vs, err := embed.Local{}.Embed(context.Background(), []string{text}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// TestLocalRanksSharedSpellingFirst: for each query the text sharing its
// words (as written, without diacritics, inflected, in a script without
// spaces) is nearer than an unrelated one.
func TestLocalRanksSharedSpellingFirst(t *testing.T) {
	for _, c := range []struct{ query, near, far string }{
		{"my cat likes fish", "cats like fish", "the stock market fell today"},
		{"tôi thích uống cà phê", "toi thich uong ca phe", "hôm nay trời mưa to"},
		{"Quarterly REPORT for Acme", "acme quarterly reports", "a recipe for pancakes"},
		{"我喜欢喝咖啡", "他也喜欢咖啡", "今天下雨了"},
		{"東京の天気を教えて", "東京の天気は晴れ", "猫が好きです"},
	} {
		q, near, far := localVector(t, c.query), localVector(t, c.near), localVector(t, c.far)
		if dn, df := embed.Cosine(q, near), embed.Cosine(q, far); dn <= df {
			t.Errorf("%q: %q at %.3f is not nearer than %q at %.3f", c.query, c.near, dn, c.far, df)
		}
	}
}

func TestLocalIsUnitLengthAndDeterministic(t *testing.T) {
	for _, text := range []string{"hello", "!!!", "a b c", strings.Repeat("word ", 5000), "Ελληνικά κείμενα"} {
		v := localVector(t, text)
		if len(v) != (embed.Local{}).Model().Dims {
			t.Fatalf("%q: %d dimensions", text, len(v))
		}
		if n := math.Sqrt(float64(embed.Cosine(v, v))); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: length %f", text, n)
		}
		again := localVector(t, text)
		if embed.Cosine(v, again) < 0.99999 {
			t.Errorf("%q: a second embedding differs", text)
		}
	}
	// The same text gives the same bytes every run: stored vectors stay
	// comparable across releases unless the ref changes.
	if got := embed.Pack(localVector(t, "quiver")); len(got) != 5+512 || got[5] != embed.Pack(localVector(t, "quiver"))[5] {
		t.Fatalf("packed local vector of %d bytes", len(got))
	}
}

func randomUnit(r *rand.Rand, dims int) embed.Vector {
	raw := make([]float32, dims)
	for i := range raw {
		raw[i] = float32(r.NormFloat64())
	}
	v, _ := embed.Unit(raw)
	return v
}

// TestQuantisedCosine: a packed vector keeps its direction (cosine with
// the original above 0.999) and scores a query within 0.01 of the float
// form.
func TestQuantisedCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{8, 384, 1536, 3072} {
		for range 20 {
			v, q := randomUnit(r, dims), randomUnit(r, dims)
			p := embed.Pack(v)
			if p.Dims() != dims || len(p) != dims+5 {
				t.Fatalf("packed %d dimensions into %d bytes", dims, len(p))
			}
			u, err := p.Unpack()
			if err != nil {
				t.Fatal(err)
			}
			if c := embed.Cosine(u, v); c < 0.999 {
				t.Errorf("%d dimensions: unpacked cosine %f", dims, c)
			}
			if d := math.Abs(float64(p.Cosine(q) - embed.Cosine(v, q))); d > 0.01 {
				t.Errorf("%d dimensions: packed score off by %f", dims, d)
			}
		}
	}
}

// FuzzPacked: any bytes read back as a stored vector are refused by
// Check or read without a panic.
func FuzzPacked(f *testing.F) {
	f.Add([]byte(embed.Pack(embed.Vector{0.6, 0.8})))
	f.Add([]byte{1, 0, 0, 0, 0, 5})
	f.Add([]byte{2, 0, 0, 128, 63, 1})
	f.Add([]byte{1, 0, 0, 192, 127, 1}) // NaN scale
	f.Fuzz(func(t *testing.T, b []byte) {
		p := embed.Packed(b)
		if p.Check() != nil {
			return
		}
		q := make(embed.Vector, p.Dims())
		q[0] = 1
		_ = p.Cosine(q)
		if v, err := p.Unpack(); err == nil && len(v) != p.Dims() {
			t.Fatalf("unpacked %d dimensions of %d", len(v), p.Dims())
		}
	})
}

// scripted is an Embedder answering from a list of errors, then with
// vectors of dims.
type scripted struct {
	errs  []error
	dims  []int
	calls [][]string
}

func (s *scripted) Model() embed.Model { return embed.Model{Ref: "fake:model"} }

func (s *scripted) Embed(_ context.Context, texts []string, _ embed.Kind) ([]embed.Vector, error) {
	s.calls = append(s.calls, texts)
	if len(s.errs) > 0 {
		err := s.errs[0]
		s.errs = s.errs[1:]
		return nil, err
	}
	d := 3
	if len(s.dims) > 0 {
		d, s.dims = s.dims[0], s.dims[1:]
	}
	out := make([]embed.Vector, len(texts))
	for i := range out {
		out[i] = make(embed.Vector, d)
		out[i][0] = 1
	}
	return out, nil
}

func TestBatchedSplitsAndRetries(t *testing.T) {
	var waits []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	inner := &scripted{errs: []error{
		&llm.Error{Kind: llm.ErrRateLimit, RetryAfter: 3 * time.Second},
		&llm.Error{Kind: llm.ErrServer},
		&llm.Error{Kind: llm.ErrRateLimit, RetryAfter: time.Hour},
	}}
	e := embed.Batched(inner, embed.BatchConfig{Size: 2, Attempts: 4, Sleep: sleep})
	vs, err := e.Embed(context.Background(), []string{"a", "b", "c", "d", "e"}, embed.Document)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 5 || len(inner.calls) != 6 {
		t.Fatalf("%d vectors in %d calls, want 5 in 6 (three failures, then batches of 2, 2 and 1)", len(vs), len(inner.calls))
	}
	if last := inner.calls[5]; len(last) != 1 || last[0] != "e" {
		t.Fatalf("last batch %q", last)
	}
	if want := []time.Duration{3 * time.Second, time.Second, 30 * time.Second}; !slices.Equal(waits, want) {
		t.Fatalf("waits %v, want %v (Retry-After, the backoff, the cap)", waits, want)
	}
	if got := e.Model(); got.Dims != 3 || got.Ref != "fake:model" {
		t.Fatalf("model %v after the first answer", got)
	}
}

func TestBatchedGivesUp(t *testing.T) {
	sleep := func(context.Context, time.Duration) error { return nil }
	auth := &llm.Error{Kind: llm.ErrAuth, Msg: "bad key"}
	inner := &scripted{errs: []error{auth}}
	if _, err := embed.Batched(inner, embed.BatchConfig{Sleep: sleep}).Embed(context.Background(), []string{"a"}, embed.Query); !errors.Is(err, auth) || len(inner.calls) != 1 {
		t.Fatalf("auth error: %v after %d calls, want it after 1", err, len(inner.calls))
	}
	busy := &llm.Error{Kind: llm.ErrOverloaded}
	inner = &scripted{errs: []error{busy, busy, busy}}
	if _, err := embed.Batched(inner, embed.BatchConfig{Attempts: 2, Sleep: sleep}).Embed(context.Background(), []string{"a"}, embed.Query); !errors.Is(err, busy) || len(inner.calls) != 2 {
		t.Fatalf("overloaded: %v after %d calls, want it after 2", err, len(inner.calls))
	}
	inner = &scripted{dims: []int{3, 4}}
	_, err := embed.Batched(inner, embed.BatchConfig{Size: 1}).Embed(context.Background(), []string{"a", "b"}, embed.Document)
	if err == nil || !strings.Contains(err.Error(), "4 dimensions after 3") {
		t.Fatalf("a change of dimension: %v", err)
	}
	if _, err := embed.Batched(inner, embed.BatchConfig{}).Embed(context.Background(), nil, embed.Document); err == nil {
		t.Fatal("no text embedded")
	}
}

func TestCheckAnswer(t *testing.T) {
	if _, _, err := embed.CheckAnswer([][]float32{{1, 0}}, 2, 0); err == nil {
		t.Error("one vector for two texts accepted")
	}
	if _, _, err := embed.CheckAnswer([][]float32{{1, 0}, {1}}, 2, 0); err == nil {
		t.Error("vectors of two lengths accepted")
	}
	if _, _, err := embed.CheckAnswer([][]float32{{0, 0}}, 1, 0); err == nil {
		t.Error("a zero vector accepted")
	}
	if _, _, err := embed.CheckAnswer([][]float32{{1, 0}}, 1, 3); err == nil {
		t.Error("a vector of the wrong dimension accepted")
	}
	vs, dims, err := embed.CheckAnswer([][]float32{{3, 4}}, 1, 0)
	if err != nil || dims != 2 || math.Abs(float64(vs[0][0])-0.6) > 1e-6 {
		t.Fatalf("CheckAnswer = %v, %d, %v", vs, dims, err)
	}
}
