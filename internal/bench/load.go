package bench

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/quiverhq/quiver/internal/procstat"
)

// turnTimeout bounds one turn of a load run; a turn past it is an error.
const turnTimeout = 30 * time.Second

// LoadStats is what one open-loop run measured on one server.
type LoadStats struct {
	// Offered is the arrival rate asked for, turns per second.
	Offered float64 `json:"offered_per_s"`
	// Turns is how many turns were sent; Errors how many failed.
	Turns  int `json:"turns"`
	Errors int `json:"errors"`
	// FirstError is the first failure's message ("" without one).
	FirstError string `json:"first_error,omitempty"`
	// Achieved is turns done per second of the run (its last end
	// included).
	Achieved float64 `json:"achieved_per_s"`
	// P50 and P99 are the turn latency, from the turn's scheduled start
	// to its last event, in milliseconds.
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	// CPUPerTurn is the server process's CPU time (user and system, from
	// its own accounting) over the run, divided by Turns, in ms.
	CPUPerTurn float64 `json:"cpu_ms_per_turn"`
}

// openLoop sends n turns at rate per second on a fixed schedule whatever
// the answers (open loop: a slow server meets the same arrivals, and the
// wait for a late start counts in the latency), and measures them and
// the CPU process pid spent.
func openLoop(ctx context.Context, rate float64, n, pid int, do func(ctx context.Context, i int) error) LoadStats {
	st := LoadStats{Offered: rate, Turns: n}
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	cpu0, _ := procstat.ProcessCPU(pid)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			tctx, cancel := context.WithTimeout(ctx, turnTimeout)
			defer cancel()
			errs[i] = do(tctx, i)
			lat[i] = time.Since(due)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _ := procstat.ProcessCPU(pid)
	for _, err := range errs {
		if err != nil {
			if st.Errors == 0 {
				st.FirstError = err.Error()
			}
			st.Errors++
		}
	}
	st.Achieved = float64(n-st.Errors) / elapsed.Seconds()
	st.P50, st.P99 = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.99))
	st.CPUPerTurn = ms(cpu1-cpu0) / float64(n)
	return st
}

// percentile is the nearest-rank p-th percentile of ds (0 for none).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
