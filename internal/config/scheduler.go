package config

import (
	"fmt"
	"time"
)

// Scheduler tunes how `quiver serve` runs scheduled tasks
// (docs/tasks.md). The zero value is the defaults: four runs at once per
// replica, a look for due tasks at least every 500ms, two-minute leases
// and a 30-second wait when a task's conversation is busy.
type Scheduler struct {
	// Off stops this replica's scheduler (the others still run tasks);
	// every replica off runs none.
	Off bool `yaml:"off"`
	// Workers is how many task runs go on at once on a replica; zero
	// means 4, at most 64.
	Workers int `yaml:"workers"`
	// Poll is the longest a replica sleeps before looking for due tasks
	// (another replica may have added one); zero means 500ms, from 50ms
	// to 1m.
	Poll Duration `yaml:"poll"`
	// Lease is how long a claimed run holds before another replica may
	// take it (renewed while it runs); zero means 2m, from 10s to 1h.
	Lease Duration `yaml:"lease"`
	// RetryBusy is how long a run whose conversation has a turn running
	// waits; zero means 30s, from 1s to 1h.
	RetryBusy Duration `yaml:"retry_busy"`
}

// between checks that a set duration lies in [lo, hi].
func between(name string, d Duration, lo, hi time.Duration) error {
	if d != 0 && (d.Std() < lo || d.Std() > hi) {
		return fmt.Errorf("scheduler.%s %v: use 0 (the default) or %v to %v", name, d.Std(), lo, hi)
	}
	return nil
}

func (s Scheduler) validate() error {
	if s.Workers < 0 || s.Workers > 64 {
		return fmt.Errorf("scheduler.workers %d: use 0 (the default, 4) to 64", s.Workers)
	}
	if err := between("poll", s.Poll, 50*time.Millisecond, time.Minute); err != nil {
		return err
	}
	if err := between("lease", s.Lease, 10*time.Second, time.Hour); err != nil {
		return err
	}
	return between("retry_busy", s.RetryBusy, time.Second, time.Hour)
}
