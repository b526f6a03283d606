package netguard

import (
	"fmt"
	"net/http"
	"time"
)

// Defaults of ServerLimits' zero fields.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// ServerLimits bound what one client may hold of Quiver's HTTP servers
// (quiver serve, quiver mcp serve --http): time to send its request's
// headers and body, an idle keep-alive connection, header bytes. Zero
// fields take the defaults. No limit bounds a response: event streams
// (SSE) last as long as their turn or session, and their writers set
// their own per-write deadlines.
type ServerLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers; zero means
	// 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, headers and body;
	// zero means 30 s. A body not sent in time fails the handler's read,
	// and the connection is closed. net/http lifts the deadline once the
	// body has been read (its read that watches for the client leaving
	// starts there), so a response that lasts, an event stream, is
	// neither cut nor has its context cancelled by it.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long between
	// requests; zero means 60 s.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (the request line
	// included); above it the server answers 431. Zero means 64 KiB.
	MaxHeaderBytes int
}

// WithDefaults returns l with its zero fields at their defaults.
func (l ServerLimits) WithDefaults() ServerLimits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return l
}

// Check reports the first limit out of range, or nil: durations 0 (the
// default) or up to a day, header bytes 0 or from 4 KiB to 1 MiB. name
// prefixes the message (the limits' configuration section).
func (l ServerLimits) Check(name string) error {
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"read_header_timeout", l.ReadHeaderTimeout}, {"read_timeout", l.ReadTimeout}, {"idle_timeout", l.IdleTimeout}} {
		if d.d < 0 || d.d > 24*time.Hour {
			return fmt.Errorf("%s.%s: use a duration between 0 (the default) and 24h", name, d.key)
		}
	}
	if l.MaxHeaderBytes != 0 && (l.MaxHeaderBytes < 4<<10 || l.MaxHeaderBytes > 1<<20) {
		return fmt.Errorf("%s.max_header_bytes %d: use 4096 to 1048576, or 0 for the default (65536)", name, l.MaxHeaderBytes)
	}
	return nil
}

// NewServer returns the http.Server of one of Quiver's servers: h under
// l (zero fields at their defaults). The caller sets the rest (a base
// context) and serves it.
func NewServer(h http.Handler, l ServerLimits) *http.Server {
	l = l.WithDefaults()
	return &http.Server{
		Handler:           h,
		ReadTimeout:       l.ReadTimeout,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}
