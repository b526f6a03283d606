package providers

import (
	"net/http"
	"time"
)

// The idle pool of the client NewHTTPClient returns: connections kept
// across all providers, kept per provider host, and how long one is kept.
const (
	maxIdleConns        = 256
	maxIdleConnsPerHost = 64
	idleConnTimeout     = 90 * time.Second
)

// NewHTTPClient returns a client for sending every model request of a
// server: no overall timeout (turns stream for minutes; each turn's
// context bounds them) and an idle pool sized for many concurrent turns
// to the same provider (64 idle connections per host, 256 in all), which
// the default transport's 2 idle connections per host would turn into a
// new TLS handshake for most requests. It is built on a clone of
// http.DefaultTransport (proxy from the environment, HTTP/2) and is safe
// for concurrent use.
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = maxIdleConns
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	t.IdleConnTimeout = idleConnTimeout
	return &http.Client{Transport: t}
}
