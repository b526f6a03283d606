package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/embed"
	"github.com/quiverhq/quiver/retrieve"
	"github.com/quiverhq/quiver/store"
)

// benchWords are what BenchmarkMemories' memories are made of.
var benchWords = strings.Fields(`ana bo linh minh lan hoa office meeting monday friday coffee tea
	school invoice contract customer deploy server password parking vpn holiday allergy peanut
	vegetarian marathon cat printer report deadline budget travel hanoi saigon madrid tokyo
	văn phòng cuộc họp cà phê báo cáo hợp đồng khách hàng máy in nghỉ tết dị ứng
	réunion facture congé reunión contraseña kantine katze встреча бухгалтерия`)

// benchVocabulary is benchWords and made-up words of two to four
// syllables, 5,000 in all, drawn by benchSentence with Zipf's law (a few
// words in most memories, most in a few), as words of real text are.
type benchVocabulary struct {
	words []string
	zipf  *mrand.Zipf
}

func newBenchVocabulary(rng *mrand.Rand) *benchVocabulary {
	syllables := strings.Fields("ba ko mi ra tu sen lo va ni qua đa hô ne ri sa to ven ka lu mo")
	words := slices.Clone(benchWords)
	for len(words) < 5000 {
		var w strings.Builder
		for range 2 + rng.IntN(3) {
			w.WriteString(syllables[rng.IntN(len(syllables))])
		}
		words = append(words, w.String())
	}
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	return &benchVocabulary{words: words, zipf: mrand.NewZipf(rng, 1.1, 1, uint64(len(words)-1))}
}

// sentence is n words of the vocabulary.
func (v *benchVocabulary) sentence(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = v.words[v.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

// BenchmarkMemories stores n memories in one organisation, made of a
// 5,000-word vocabulary drawn by Zipf's law, with embed.Local vectors:
// one in ten shared, the rest spread over as few people as the per-owner
// cap (store.MaxMemoriesPerOwner) allows, so that one person sees their
// own and the shared ones (all n up to 10,000; 20,000 of 100,000). It then
// measures the two halves of that person's memory search: SearchText
// (SearchMemories of a five-word query, 20 hits) and Vectors
// (MemoryVectors and retrieve.Nearest of the query's vector, 20 hits; the
// query's embedding is not timed), and Nearest alone over candidates
// already read. The first two report their p50 and p99 besides the mean.
// Each call uses identifiers of its own, so s may hold other data.
func BenchmarkMemories(b *testing.B, s store.Memories, n int) {
	ctx := context.Background()
	f := &fixture{prefix: "bench-" + rand.Text()}
	org, owner := f.id("org"), f.id("ana")
	rng := mrand.New(mrand.NewPCG(1, 2))
	vocab := newBenchVocabulary(rng)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = vocab.sentence(8 + rng.IntN(13))
	}
	vs, err := embedAll(ctx, texts)
	if err != nil {
		b.Fatal(err)
	}
	model := embed.Local{}.Model().String()
	start := time.Now()
	visible, personal := 0, 0
	for i, text := range texts {
		m := store.Memory{OrgID: org, ID: fmt.Sprint("m", i), OwnerID: owner, Text: text, Model: model,
			Vector: embed.Pack(vs[i]), CreatedAt: time.Unix(1_700_000_000+int64(i), 0)}
		if i%10 == 9 {
			m.OwnerID = ""
		} else {
			if p := personal / store.MaxMemoriesPerOwner; p > 0 {
				m.OwnerID = f.id(fmt.Sprint("person", p))
			}
			personal++
		}
		if m.OwnerID == owner || m.OwnerID == "" {
			visible++
		}
		if _, err := s.PutMemory(ctx, m, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("stored %d memories (%d seen by the searcher) in %v", n, visible, time.Since(start).Round(time.Millisecond))
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = vocab.sentence(5)
	}
	qvs, err := embedAll(ctx, queries)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("SearchText%d", n), func(b *testing.B) {
		var times []time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			hits, err := s.SearchMemories(ctx, store.MemorySearch{OrgID: org, OwnerID: owner, Text: queries[i%len(queries)], Limit: 20})
			if err != nil {
				b.Fatalf("SearchMemories: %d hits, %v", len(hits), err)
			}
			times = append(times, time.Since(t0))
			i++
		}
		reportPercentiles(b, times)
	})
	b.Run(fmt.Sprintf("Vectors%d", n), func(b *testing.B) {
		var times []time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			cands, err := s.MemoryVectors(ctx, org, owner, model)
			if err != nil || len(cands) != visible {
				b.Fatalf("MemoryVectors: %d, %v", len(cands), err)
			}
			if hits := retrieve.Nearest(qvs[i%len(qvs)], cands, 20); len(hits) != 20 {
				b.Fatalf("Nearest: %d hits", len(hits))
			}
			times = append(times, time.Since(t0))
			i++
		}
		reportPercentiles(b, times)
	})
	// Nearest alone, over candidates already read: how much of Vectors is
	// the comparison, how much the read.
	cands, err := s.MemoryVectors(ctx, org, owner, model)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("Nearest%d", n), func(b *testing.B) {
		i := 0
		for b.Loop() {
			retrieve.Nearest(qvs[i%len(qvs)], cands, 20)
			i++
		}
	})
}

// embedAll embeds texts with the local embedder, in batches.
func embedAll(ctx context.Context, texts []string) ([]embed.Vector, error) {
	var out []embed.Vector
	for batch := range slices.Chunk(texts, embed.MaxTexts) {
		vs, err := embed.Local{}.Embed(ctx, batch, embed.Document)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// reportPercentiles reports the 50th and 99th percentiles of times in
// microseconds.
func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	at := func(p float64) float64 {
		return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// LargeBenchmarks reports whether the benchmarks that store 100,000 rows
// or more run: QUIVER_BENCH_LARGE=1. Their setup takes minutes, more than
// the run-once check of every benchmark (scripts/test) should spend.
func LargeBenchmarks(b *testing.B) {
	b.Helper()
	if os.Getenv("QUIVER_BENCH_LARGE") != "1" {
		b.Skip("stores 100,000 rows; set QUIVER_BENCH_LARGE=1 to run it")
	}
}
