package netguard

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
	"testing"
)

// ssrfNames are stub DNS answers for names that point where they must not.
var ssrfNames = map[string][]string{
	"loop.example":       {"127.0.0.1"},
	"loop6.example":      {"::1"},
	"private.example":    {"10.1.2.3"},
	"private6.example":   {"fd12:3456::1"},
	"imds.example":       {"169.254.169.254"},
	"imds6.example":      {"fd00:ec2::254"},
	"alibaba.example":    {"100.100.100.200"},
	"wireserver.example": {"168.63.129.16"},
	"mapped.example":     {"::ffff:127.0.0.1"},
	"nat64.example":      {"64:ff9b::a9fe:a9fe"},
	"mixed.example":      {"93.184.215.14", "192.168.1.1"},
	"mixed6.example":     {"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::1"},
	"cgnat.example":      {"100.64.0.1"},
	"zero.example":       {"0.0.0.0"},
}

// blockedURLs is the SSRF battery: every URL must be refused in Public mode
// before the dialer is reached.
var blockedURLs = []struct{ name, url string }{
	// loopback
	{"loopback v4", "http://127.0.0.1/"},
	{"loopback v4 other", "http://127.0.0.2/"},
	{"loopback v4 top", "https://127.255.255.254/"},
	{"loopback v4 with port", "http://127.0.0.1:80/admin"},
	{"localhost", "http://localhost/"},
	{"localhost upper trailing dot", "http://LOCALHOST./"},
	{"localhost subdomain", "http://api.localhost/"},
	{"name resolving to loopback", "http://loop.example/"},
	{"name resolving to ::1", "http://loop6.example/"},
	// unspecified and this-network
	{"unspecified v4", "http://0.0.0.0/"},
	{"decimal zero", "http://0/"},
	{"this network", "http://0.1.2.3/"},
	{"name resolving to 0.0.0.0", "http://zero.example/"},
	// private v4
	{"private 10/8", "http://10.0.0.1/"},
	{"private 10/8 top", "http://10.255.255.255/"},
	{"private 172.16/12", "http://172.16.0.1/"},
	{"private 172.16/12 top", "http://172.31.255.254/"},
	{"private 192.168/16", "http://192.168.0.1/"},
	{"private 192.168/16 https", "https://192.168.1.1/"},
	{"name resolving to private", "http://private.example/"},
	{"mixed public and private answers", "http://mixed.example/"},
	// CGNAT, link-local, multicast, broadcast, reserved, documentation
	{"cgnat", "http://100.64.0.1/"},
	{"cgnat top", "http://100.127.255.254/"},
	{"name resolving to cgnat", "http://cgnat.example/"},
	{"link-local v4", "http://169.254.1.1/"},
	{"multicast v4", "http://224.0.0.1/"},
	{"multicast ssdp", "http://239.255.255.250/"},
	{"broadcast", "http://255.255.255.255/"},
	{"reserved class e", "http://240.0.0.1/"},
	{"ietf protocol assignments", "http://192.0.0.1/"},
	{"benchmarking", "http://198.18.0.1/"},
	{"6to4 relay anycast", "http://192.88.99.1/"},
	{"documentation test-net-1", "http://192.0.2.1/"},
	{"documentation test-net-2", "http://198.51.100.1/"},
	{"documentation test-net-3", "http://203.0.113.1/"},
	// cloud metadata
	{"aws imds", "http://169.254.169.254/latest/meta-data/"},
	{"aws ecs credentials", "http://169.254.170.2/v2/credentials"},
	{"aws imds v6", "http://[fd00:ec2::254]/latest/meta-data/"},
	{"alibaba metadata", "http://100.100.100.200/latest/meta-data/"},
	{"azure wireserver", "http://168.63.129.16/"},
	{"gcp metadata name", "http://metadata.google.internal/computeMetadata/v1/"},
	{"gcp metadata short name", "http://metadata/computeMetadata/v1/"},
	{"gcp metadata.goog", "http://metadata.goog/"},
	{"aws instance-data name", "http://instance-data/latest/"},
	{"name resolving to imds", "http://imds.example/"},
	{"name resolving to imds v6", "http://imds6.example/"},
	{"name resolving to alibaba", "http://alibaba.example/"},
	{"name resolving to wireserver", "http://wireserver.example/"},
	// odd spellings of IPv4
	{"decimal loopback", "http://2130706433/"},
	{"octal loopback", "http://0177.0.0.1/"},
	{"hex loopback", "http://0x7f000001/"},
	{"hex upper loopback", "http://0X7F000001/"},
	{"hex dotted loopback", "http://0x7f.0x0.0x0.0x1/"},
	{"short loopback 127.1", "http://127.1/"},
	{"short loopback 127.0.1", "http://127.0.1/"},
	{"short octal loopback", "http://0177.1/"},
	{"octal whole loopback", "http://017700000001/"},
	{"leading zeros loopback", "http://127.000.000.001/"},
	{"trailing dot loopback", "http://127.0.0.1./"},
	{"unicode circled digits", "http://①②⑦.⓪.⓪.①/"},
	{"fullwidth digits", "http://１２７．０．０．１/"},
	{"decimal imds", "http://2852039166/"},
	{"hex imds", "http://0xA9FEA9FE/"},
	{"octal imds", "http://0251.0376.0251.0376/"},
	{"trailing dot imds", "http://169.254.169.254./"},
	{"short private", "http://10.1/"},
	{"decimal private", "http://3232235521/"},
	{"invalid octal", "http://08.0.0.1/"},
	{"octet overflow", "http://256.0.0.1/"},
	{"five parts", "http://1.2.3.4.5/"},
	{"numeric overflow", "http://4294967296/"},
	// IPv6 forms
	{"ipv6 loopback", "http://[::1]/"},
	{"ipv6 loopback long", "http://[0:0:0:0:0:0:0:1]/"},
	{"ipv6 unspecified", "http://[::]/"},
	{"ipv4-mapped loopback", "http://[::ffff:127.0.0.1]/"},
	{"ipv4-mapped loopback hex", "http://[::ffff:7f00:1]/"},
	{"ipv4-mapped imds", "http://[::ffff:169.254.169.254]/"},
	{"ipv4-mapped private", "http://[::ffff:10.0.0.1]/"},
	{"ipv4-compatible loopback", "http://[::127.0.0.1]/"},
	{"ipv4-compatible imds", "http://[::a9fe:a9fe]/"},
	{"nat64 loopback", "http://[64:ff9b::7f00:1]/"},
	{"nat64 imds", "http://[64:ff9b::a9fe:a9fe]/"},
	{"nat64 local-use private", "http://[64:ff9b:1::a00:1]/"},
	{"6to4 loopback", "http://[2002:7f00:1::1]/"},
	{"6to4 imds", "http://[2002:a9fe:a9fe::1]/"},
	{"teredo", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/"},
	{"link-local v6", "http://[fe80::1]/"},
	{"link-local v6 zone", "http://[fe80::1%25eth0]/"},
	{"loopback v6 zone", "http://[::1%25lo]/"},
	{"unique local", "http://[fd12:3456::1]/"},
	{"unique local fc", "http://[fc00::1]/"},
	{"site-local", "http://[fec0::1]/"},
	{"multicast v6", "http://[ff02::1]/"},
	{"documentation v6", "http://[2001:db8::1]/"},
	{"documentation v6 3fff", "http://[3fff::1]/"},
	{"name resolving to mapped loopback", "http://mapped.example/"},
	{"name resolving to nat64 imds", "http://nat64.example/"},
	{"name resolving to ula", "http://private6.example/"},
	{"mixed v6 answers", "http://mixed6.example/"},
	// bracket and authority tricks
	{"bracketed ipv4", "http://[127.0.0.1]/"},
	{"double brackets", "http://[[::1]]/"},
	{"fragment hides host", "http://127.0.0.1#@example.com/"},
	{"backslash userinfo", "http://example.com\\@127.0.0.1/"},
	{"bracket userinfo", "http://[::1]@example.com/"},
	{"userinfo to loopback", "http://example.com@127.0.0.1/"},
	// schemes, credentials, ports, malformed
	{"file scheme", "file:///etc/passwd"},
	{"gopher scheme", "gopher://127.0.0.1:6379/_INFO"},
	{"ftp scheme", "ftp://example.com/"},
	{"dict scheme", "dict://example.com:11211/"},
	{"websocket scheme", "ws://example.com/"},
	{"javascript scheme", "javascript:alert(1)"},
	{"data scheme", "data:text/plain,hi"},
	{"no scheme", "//example.com/"},
	{"no host", "http:///path"},
	{"opaque", "http:example.com"},
	{"user and password", "http://user:secret@example.com/"},
	{"user only", "https://user@example.com/"},
	{"empty user token", "https://:token@example.com/"},
	{"ssh port", "http://example.com:22/"},
	{"redis port", "http://example.com:6379/"},
	{"port zero", "http://example.com:0/"},
	{"port out of range", "http://example.com:99999/"},
	{"space in host", "http://example .com/"},
}

func TestBatteryCount(t *testing.T) {
	if n := len(blockedURLs) + len(redirectTargets); n < 80 {
		t.Fatalf("SSRF battery has %d cases, want at least 80", n)
	}
}

// TestBatteryCheckURL: every battery URL is refused by CheckURL with
// ErrBlocked, in Public mode.
func TestBatteryCheckURL(t *testing.T) {
	res := newStub(publicAnswers)
	for name, ips := range ssrfNames {
		res.add(name, ips...)
	}
	c, _ := testClient(t, Config{}, res, nil)
	for _, tc := range blockedURLs {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckURL(t.Context(), tc.url)
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("CheckURL(%q) = %v, want ErrBlocked", tc.url, err)
			}
		})
	}
}

// TestBatteryDo: every battery URL is refused by Do with ErrBlocked and the
// dial function is never reached, so nothing leaves the machine. URLs that
// net/http cannot even turn into a request count as refused too.
func TestBatteryDo(t *testing.T) {
	res := newStub(publicAnswers)
	for name, ips := range ssrfNames {
		res.add(name, ips...)
	}
	srv := okServer(t)
	c, d := testClient(t, Config{}, res, srv)
	for _, tc := range blockedURLs {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, tc.url, nil)
			if err != nil {
				return // refused by net/http before any client code ran
			}
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("Do(%q) = %v, want ErrBlocked", tc.url, err)
			}
		})
	}
	if got := d.dialled(); len(got) != 0 {
		t.Fatalf("dial reached for refused URLs: %v", got)
	}
}

// allowedURLs are public destinations: allowed, and dialled at exactly the
// checked address (the test dialer then lands on a loopback server).
var allowedURLs = []struct{ name, url, dial string }{
	{"public v4 literal", "http://8.8.8.8/", "8.8.8.8:80"},
	{"public v4 https port", "http://1.1.1.1:443/", "1.1.1.1:443"},
	{"public v6 literal", "http://[2606:4700:4700::1111]/", "[2606:4700:4700::1111]:80"},
	{"public name", "http://example.com/path?q=1", "93.184.215.14:80"},
	{"public name trailing dot", "http://example.com./", "93.184.215.14:80"},
	{"public name upper case", "http://EXAMPLE.com/", "93.184.215.14:80"},
	{"public v6 name", "http://v6.example.com/", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:80"},
	{"idn name", "http://bücher.example/", "93.184.215.15:80"},
	{"decimal public normalised", "http://134744072/", "8.8.8.8:80"},
	{"ipv4-mapped public unmapped", "http://[::ffff:8.8.8.8]/", "8.8.8.8:80"},
}

func TestAllowedPublic(t *testing.T) {
	srv := okServer(t)
	for _, tc := range allowedURLs {
		t.Run(tc.name, func(t *testing.T) {
			c, d := testClient(t, Config{}, nil, srv)
			if err := c.CheckURL(t.Context(), tc.url); err != nil {
				t.Fatalf("CheckURL(%q) = %v, want nil", tc.url, err)
			}
			resp, err := get(t, c, tc.url)
			if err != nil {
				t.Fatalf("Do(%q) = %v", tc.url, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := []netip.AddrPort{netip.MustParseAddrPort(tc.dial)}
			if got := d.dialled(); string(body) != "ok" || len(got) != 1 || got[0] != want[0] {
				t.Fatalf("dialled %v (body %q), want %v", got, body, want)
			}
		})
	}
}
