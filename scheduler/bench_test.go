package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/pgtest"
	"github.com/quiverhq/quiver/scheduler"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/store/postgres"
	"github.com/quiverhq/quiver/store/sqlite"
)

// benchStore opens a fresh store of the named backend for one benchmark
// iteration.
func benchStore(b *testing.B, backend string) store.Tasks {
	b.Helper()
	var st interface {
		store.Tasks
		Close() error
	}
	var err error
	if backend == "sqlite" {
		st, err = sqlite.Open(b.Context(), b.TempDir())
	} else {
		st, err = postgres.Open(b.Context(), pgtest.URL(b))
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// timingRunner records each run's start against its due time and says
// when the expected number have run.
type timingRunner struct {
	mu   sync.Mutex
	late []time.Duration
	left atomic.Int64
	// from is when the schedulers started: lateness counts from it for
	// runs due before (the tasks took longer to create than planned).
	from  time.Time
	done  chan struct{}
	clock func() time.Time
}

func (r *timingRunner) RunTask(_ context.Context, run scheduler.Run) (string, error) {
	d := r.clock().Sub(later(run.Due, r.from))
	r.mu.Lock()
	r.late = append(r.late, d)
	r.mu.Unlock()
	if r.left.Add(-1) == 0 {
		close(r.done)
	}
	return "turn", nil
}

// runAll starts replicas schedulers on st with the real clock until
// every one of n runs has started, and returns the lateness of each.
func runAll(b *testing.B, st store.Tasks, replicas, n int) []time.Duration {
	b.Helper()
	r := &timingRunner{done: make(chan struct{}), clock: time.Now, from: time.Now()}
	r.left.Store(int64(n))
	ctx, stop := context.WithCancel(b.Context())
	var wg sync.WaitGroup
	for i := range replicas {
		s, err := scheduler.New(scheduler.Config{Tasks: st, Runner: r, Owner: fmt.Sprintf("replica-%d", i),
			Workers: 16, Poll: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { s.Run(ctx) })
	}
	<-r.done
	stop()
	wg.Wait()
	return r.late
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkDueAtOnce is 10,000 tasks due at the same instant, run by one
// and by two replicas' schedulers (16 workers each, a runner that does
// nothing): how fast the claims drain them.
func BenchmarkDueAtOnce(b *testing.B) {
	const n = 10_000
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, replicas := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/replicas=%d", backend, replicas), func(b *testing.B) {
				var elapsed time.Duration
				var lates []time.Duration
				for b.Loop() {
					b.StopTimer()
					st := benchStore(b, backend)
					due := time.Now().Add(2 * time.Second)
					for i := range n {
						tk := newTask(i, due)
						// Ten communities of 1,000, each at its cap, one task a person.
						tk.OrgID, tk.UserID = fmt.Sprintf("org-%d", i%10), fmt.Sprintf("user-%d", i)
						if _, err := st.CreateTask(b.Context(), tk); err != nil {
							b.Fatal(err)
						}
					}
					time.Sleep(time.Until(due))
					b.StartTimer()
					start := time.Now()
					lates = append(lates, runAll(b, st, replicas, n)...)
					elapsed += time.Since(start)
				}
				b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "runs/s")
				b.ReportMetric(float64(percentile(lates, 0.5).Milliseconds()), "p50-ms")
				b.ReportMetric(float64(percentile(lates, 0.99).Milliseconds()), "p99-ms")
			})
		}
	}
}

// BenchmarkPrecision is 300 tasks due over six seconds, on the real
// clock: how long after its due time each run starts.
func BenchmarkPrecision(b *testing.B) {
	const n = 300
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			var lates []time.Duration
			for b.Loop() {
				st := benchStore(b, backend)
				base := time.Now().Add(time.Second)
				for i := range n {
					tk := newTask(i, base.Add(time.Duration(i)*20*time.Millisecond))
					tk.UserID = fmt.Sprintf("user-%d", i)
					if _, err := st.CreateTask(b.Context(), tk); err != nil {
						b.Fatal(err)
					}
				}
				lates = append(lates, runAll(b, st, 1, n)...)
			}
			b.ReportMetric(float64(percentile(lates, 0.5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lates, 0.99).Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(slices.Max(lates).Microseconds())/1000, "max-ms")
		})
	}
}
