package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/netguard"
)

// Turns bounds running turns. Zero values take the defaults: 60s of
// silence from a model stream, 15m per turn, 4 turns at once per user,
// 256 per server, and 1s for a new turn's first writes to wait for the
// store.
type Turns struct {
	// ModelIdle is how long a model stream may send nothing before the
	// call fails (and is retried when it had produced nothing yet).
	ModelIdle Duration `yaml:"model_idle"`
	// MaxDuration is the wall time one turn may run (a paused turn's
	// answer starts it again); past it the turn is stopped and recorded
	// as interrupted.
	MaxDuration Duration `yaml:"max_duration"`
	// MaxPerUser is how many turns one user may run at once on one
	// `quiver serve` process (429 past it).
	MaxPerUser int `yaml:"max_per_user"`
	// MaxPerServer is how many turns one `quiver serve` process runs at
	// once, for all users (429 past it). With several replicas each
	// counts its own.
	MaxPerServer int `yaml:"max_per_server"`
	// AdmitWait is how long a new turn's first writes (its rate-limit
	// token, its claim on the conversation) wait for a busy store before
	// the message is refused with 503 and Retry-After.
	AdmitWait Duration `yaml:"admit_wait"`
}

// validate checks the turn bounds: durations 0 (the default) or from 1s
// to 24h, counts 0 (the default) or from 1, per user at most per server.
func (t Turns) validate() error {
	for _, d := range []struct {
		name string
		d    Duration
	}{{"model_idle", t.ModelIdle}, {"max_duration", t.MaxDuration}} {
		if d.d != 0 && (d.d.Std() < time.Second || d.d.Std() > 24*time.Hour) {
			return fmt.Errorf("turns.%s: use a duration from 1s to 24h, or 0 for the default", d.name)
		}
	}
	if t.AdmitWait != 0 && (t.AdmitWait.Std() < 100*time.Millisecond || t.AdmitWait.Std() > time.Minute) {
		return errors.New("turns.admit_wait: use a duration from 100ms to 1m, or 0 for the default (1s)")
	}
	if t.MaxPerUser < 0 || t.MaxPerUser > 10_000 {
		return fmt.Errorf("turns.max_per_user %d: use 1–10000, or 0 for the default (4)", t.MaxPerUser)
	}
	if t.MaxPerServer < 0 || t.MaxPerServer > 1_000_000 {
		return fmt.Errorf("turns.max_per_server %d: use 1–1000000, or 0 for the default (256)", t.MaxPerServer)
	}
	if t.MaxPerUser > 0 && t.MaxPerServer > 0 && t.MaxPerUser > t.MaxPerServer {
		return errors.New("turns.max_per_user cannot be above turns.max_per_server")
	}
	return nil
}

// HTTP bounds the connections of Quiver's HTTP servers (`quiver serve`
// and `quiver mcp serve --http`). Zero values take the defaults: 10s for
// a request's headers, 30s for the whole request, 60s for an idle
// keep-alive connection, 64 KiB of headers. No limit bounds a response
// (event streams last as long as their turn).
type HTTP struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout Duration `yaml:"read_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes bounds a request's headers (431 above it).
	MaxHeaderBytes int `yaml:"max_header_bytes"`
}

// Limits is h as the servers' connection limits.
func (h HTTP) Limits() netguard.ServerLimits {
	return netguard.ServerLimits{ReadHeaderTimeout: h.ReadHeaderTimeout.Std(), ReadTimeout: h.ReadTimeout.Std(),
		IdleTimeout: h.IdleTimeout.Std(), MaxHeaderBytes: h.MaxHeaderBytes}
}

// validate checks the limits by netguard.ServerLimits.Check's rules.
func (h HTTP) validate() error { return h.Limits().Check("http") }
