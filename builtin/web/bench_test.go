package web

import (
	"context"
	"slices"
	"testing"
	"time"
)

// benchChain measures Search latency over b.N calls against loopback
// fakes where Brave is set up by brave and SearXNG answers. The clock moves
// past every cooldown before each call, so each call pays for Brave's
// failure rather than skipping it. It reports p50 and p99 in ms.
func benchChain(b *testing.B, brave reply, timeout time.Duration) {
	f := newFakes(b)
	f.brave.set(brave)
	cfg := f.config()
	cfg.Timeout = timeout
	c := New(cfg).Chain()
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		f.clock.Advance(MaxCooldown + time.Second)
		start := time.Now()
		o, err := c.Search(ctx, Query{Text: "go generics"})
		lat = append(lat, time.Since(start))
		if err != nil || o.Engine != "searxng" {
			b.Fatalf("served by %q, err %v; want searxng", o.Engine, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkChainFirstHangs: Brave hangs until its 10 ms timeout.
func BenchmarkChainFirstHangs(b *testing.B) {
	benchChain(b, reply{hang: true}, 10*time.Millisecond)
}

// BenchmarkChainFirstRateLimited: Brave answers 429 at once.
func BenchmarkChainFirstRateLimited(b *testing.B) {
	benchChain(b, rateLimited("1"), time.Second)
}

// BenchmarkChainFirstCoolingDown: Brave is benched, so it is skipped.
func BenchmarkChainFirstCoolingDown(b *testing.B) {
	f := newFakes(b)
	f.brave.set(rateLimited("3600"))
	c := New(f.config()).Chain()
	ctx := context.Background()
	c.Search(ctx, Query{Text: "warm"})
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if o, _ := c.Search(ctx, Query{Text: "go generics"}); o.Engine != "searxng" {
			b.Fatalf("served by %q, want searxng", o.Engine)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "p99-ms")
}
