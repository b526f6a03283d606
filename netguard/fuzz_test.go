package netguard

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"testing"
)

// anyPublic answers every name with one public address, so that CheckURL's
// outcome depends only on the URL.
type anyPublic struct{}

func (anyPublic) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

// FuzzCheckURL: CheckURL never panics, every refusal matches ErrBlocked,
// and anything accepted is an http or https URL with a host, no userinfo,
// and a host that normalises to an allowed address or a valid name.
func FuzzCheckURL(f *testing.F) {
	for _, tc := range blockedURLs {
		f.Add(tc.url)
	}
	for _, tc := range allowedURLs {
		f.Add(tc.url)
	}
	c := New(Config{Resolver: anyPublic{}})
	f.Fuzz(func(t *testing.T, raw string) {
		err := c.CheckURL(context.Background(), raw)
		if err != nil {
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("CheckURL(%q) = %v, not ErrBlocked", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			t.Fatalf("CheckURL accepted %q (parse err %v)", raw, perr)
		}
		h, herr := parseHost(u.Hostname())
		if herr != nil {
			t.Fatalf("accepted %q but its host does not parse: %v", raw, herr)
		}
		if h.ip.IsValid() && c.pol.refusal(h.ip) != "" {
			t.Fatalf("accepted %q whose address %v the policy refuses", raw, h.ip)
		}
	})
}
