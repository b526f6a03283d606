package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Server says how people reach `quiver serve`.
type Server struct {
	// PublicURL is the address people open the server at, when it is not
	// the one it listens on (behind a reverse proxy or a TLS terminator):
	// "https://quiver.example.com". Login links (the first start's,
	// quiver login-link's) point at it. An http or https URL with a host,
	// no user, path, query or fragment; "" means the address serve
	// listens on.
	PublicURL string `yaml:"public_url"`
}

// maxPublicURL bounds server.public_url.
const maxPublicURL = 500

// validate checks PublicURL.
func (s Server) validate() error {
	if s.PublicURL == "" {
		return nil
	}
	const want = "server.public_url: give the address people open, as scheme and host only, e.g. https://quiver.example.com"
	u, err := url.Parse(s.PublicURL)
	switch {
	case len(s.PublicURL) > maxPublicURL:
		return fmt.Errorf("server.public_url: longer than %d characters", maxPublicURL)
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Hostname() == "", u.Opaque != "":
		return fmt.Errorf("%s (got %q)", want, s.PublicURL)
	case u.User != nil:
		return fmt.Errorf("server.public_url: must not hold a user or password")
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || strings.Contains(s.PublicURL, "?") || strings.Contains(s.PublicURL, "#"):
		return fmt.Errorf("%s: the web UI is served from the root, so no path, query or fragment (got %q)", want, s.PublicURL)
	}
	return nil
}

// Base is PublicURL without a trailing slash, the prefix of the links
// people follow; "" when none is configured.
func (s Server) Base() string { return strings.TrimSuffix(s.PublicURL, "/") }
