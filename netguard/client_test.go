package netguard

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDNSFlipBetweenCheckAndDial: the name answers public to CheckURL and
// private to every later look-up. The dial-time look-up is the one that
// counts, so the request is refused and nothing is dialled.
func TestDNSFlipBetweenCheckAndDial(t *testing.T) {
	res := newStub(nil)
	res.add("flip.example", "93.184.215.14")
	res.add("flip.example", "127.0.0.1")
	c, d := testClient(t, Config{}, res, okServer(t))
	if err := c.CheckURL(t.Context(), "http://flip.example/"); err != nil {
		t.Fatalf("CheckURL on the public answer = %v", err)
	}
	_, err := get(t, c, "http://flip.example/")
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("Do after the flip = %v, want ErrBlocked", err)
	}
	if got := d.dialled(); len(got) != 0 {
		t.Fatalf("dialled %v after the answer turned private", got)
	}
}

// TestDNSFlipPerConnection: each new connection resolves exactly once and
// dials exactly the address that look-up returned and the policy checked;
// there is no second look-up for a rebinding answer to slip into.
func TestDNSFlipPerConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // force a new dial per request
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	res := newStub(nil)
	res.add("flip.example", "93.184.215.14")
	res.add("flip.example", "10.0.0.7")
	res.add("flip.example", "93.184.215.99")
	c, d := testClient(t, Config{}, res, srv)

	want := []error{nil, ErrBlocked, nil}
	for i, w := range want {
		resp, err := get(t, c, "http://flip.example/")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, w) || (w == nil && err != nil) {
			t.Fatalf("request %d: err = %v, want %v", i, err, w)
		}
	}
	if n := res.lookups("flip.example"); n != 3 {
		t.Fatalf("%d look-ups for 3 connections, want exactly 3", n)
	}
	got := d.dialled()
	if len(got) != 2 || got[0].String() != "93.184.215.14:80" || got[1].String() != "93.184.215.99:80" {
		t.Fatalf("dialled %v, want only the two checked public answers", got)
	}
}

func TestSelfHostedReachesLoopback(t *testing.T) {
	srv := okServer(t)
	c := New(Config{Mode: SelfHosted})
	resp, err := get(t, c, srv.URL+"/x?y=1")
	if err != nil {
		t.Fatalf("self-hosted GET %s: %v", srv.URL, err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
}

func TestPublicRefusesRealLoopbackServer(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c := New(Config{Ports: []uint16{uint16(srv.Listener.Addr().(*net.TCPAddr).Port)}})
	if _, err := get(t, c, srv.URL); !errors.Is(err, ErrBlocked) {
		t.Fatalf("public GET loopback = %v, want ErrBlocked", err)
	}
	if hits.Load() != 0 {
		t.Fatal("loopback server was reached in Public mode")
	}
}

// TestSelfHostedStillBlocksMetadata: private and loopback open up, metadata
// endpoints stay closed, and the dialer is never reached for them.
func TestSelfHostedStillBlocksMetadata(t *testing.T) {
	res := newStub(publicAnswers)
	for name, ips := range ssrfNames {
		res.add(name, ips...)
	}
	c, d := testClient(t, Config{Mode: SelfHosted}, res, okServer(t))
	for _, raw := range []string{
		"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/",
		"http://100.100.100.200/", "http://168.63.129.16/", "http://metadata.google.internal/",
		"http://imds.example/", "http://imds6.example/", "http://0xA9FEA9FE/",
		"http://[::ffff:169.254.169.254]/", "http://[64:ff9b::a9fe:a9fe]/", "http://169.254.1.1:8080/",
	} {
		if err := c.CheckURL(t.Context(), raw); !errors.Is(err, ErrBlocked) {
			t.Errorf("self-hosted CheckURL(%q) = %v, want ErrBlocked", raw, err)
		}
		if _, err := get(t, c, raw); !errors.Is(err, ErrBlocked) {
			t.Errorf("self-hosted Do(%q) = %v, want ErrBlocked", raw, err)
		}
	}
	for _, raw := range []string{"http://10.0.0.1:8080/", "http://[::1]:11434/", "http://private.example/", "http://localhost:3000/"} {
		res.add("localhost", "127.0.0.1")
		if err := c.CheckURL(t.Context(), raw); err != nil {
			t.Errorf("self-hosted CheckURL(%q) = %v, want nil", raw, err)
		}
	}
	if got := d.dialled(); len(got) != 0 {
		t.Fatalf("dialled %v", got)
	}
}

func TestByteCap(t *testing.T) {
	const max = 1000
	for _, tc := range []struct {
		name    string
		size    int
		wantErr error
	}{
		{"under", max - 1, nil},
		{"exactly", max, nil},
		{"one over", max + 1, ErrTooLarge},
		{"far over", 50 * max, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write(bytes.Repeat([]byte("a"), tc.size))
			}))
			defer srv.Close()
			c, _ := testClient(t, Config{MaxBytes: max}, nil, srv)
			resp, err := get(t, c, "http://example.com/")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("read err = %v, want %v", err, tc.wantErr)
			}
			if len(b) > max {
				t.Fatalf("read %d bytes past the cap of %d", len(b), max)
			}
		})
	}
}

// TestTimeout: a handler that never answers is cut off by Config.Timeout.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := testClient(t, Config{Timeout: 50 * time.Millisecond}, nil, srv)
	_, err := get(t, c, "http://example.com/")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

// TestProxyEnvIgnored: with HTTP_PROXY pointing at a loopback proxy, the
// request still goes straight to the checked address.
func TestProxyEnvIgnored(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied.Add(1) }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	c, d := testClient(t, Config{}, nil, okServer(t))
	resp, err := get(t, c, "http://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if proxied.Load() != 0 {
		t.Fatal("request went through the environment proxy")
	}
	if got := d.dialled(); len(got) != 1 || got[0].String() != "93.184.215.14:80" {
		t.Fatalf("dialled %v, want the origin", got)
	}
	if tr := c.HTTP().Transport.(*guardTransport).base.(*http.Transport); tr.Proxy != nil {
		t.Fatal("transport has a Proxy func")
	}
}

// TestErrorNeverEchoesSecrets: the refusal names the host and nothing else.
func TestErrorNeverEchoesSecrets(t *testing.T) {
	res := newStub(publicAnswers)
	res.add("private.example", "10.0.0.1")
	c, _ := testClient(t, Config{}, res, nil)
	for _, tc := range []struct{ url, want string }{
		{"http://user:hunter2@example.com/?token=s3cret", "blocked: address not allowed: example.com"},
		{"http://private.example/cb?access_token=s3cret", "blocked: address not allowed: private.example"},
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/role", "blocked: address not allowed: 169.254.169.254"},
		{"gopher://hunter2@127.0.0.1/?s3cret", "blocked: address not allowed: 127.0.0.1"},
		{"http://[::1%25s3cret]/", "blocked: address not allowed: ::1"},
	} {
		for _, err := range []error{c.CheckURL(t.Context(), tc.url), doErr(t, c, tc.url)} {
			var be *BlockedError
			if !errors.As(err, &be) || err.Error() != tc.want {
				t.Errorf("%s: err = %v, want %q", tc.url, err, tc.want)
			}
			if msg := err.Error(); strings.Contains(msg, "s3cret") || strings.Contains(msg, "hunter2") {
				t.Errorf("error echoes a secret: %q", msg)
			}
		}
	}
}

func doErr(t *testing.T, c *Client, raw string) error {
	resp, err := get(t, c, raw)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestControlHookBlocks: the real dialer's Control hook refuses a blocked
// address even if it were handed one directly.
func TestControlHookBlocks(t *testing.T) {
	c := New(Config{})
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "169.254.169.254:80", "8.8.8.8:22"} {
		if err := c.control("tcp", addr, nil); !errors.Is(err, ErrBlocked) {
			t.Errorf("control(%q) = %v, want ErrBlocked", addr, err)
		}
	}
	if err := c.control("tcp4", "8.8.8.8:443", nil); err != nil {
		t.Errorf("control(8.8.8.8:443) = %v, want nil", err)
	}
}

func TestDefaults(t *testing.T) {
	c := New(Config{MaxRedirects: 9})
	got := c.cfg
	if got.Mode != Public || got.Timeout != DefaultTimeout || got.MaxBytes != DefaultMaxBytes ||
		got.MaxRedirects != DefaultMaxRedirects || got.UserAgent != DefaultUserAgent || got.Resolver != nil {
		t.Fatalf("defaults = %+v", got)
	}
	if c.HTTP().Timeout != DefaultTimeout {
		t.Fatalf("http.Client.Timeout = %v", c.HTTP().Timeout)
	}
}

func TestUserAgent(t *testing.T) {
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ua.Store(r.UserAgent()) }))
	defer srv.Close()
	c, _ := testClient(t, Config{UserAgent: "quiver-test"}, nil, srv)
	resp, err := get(t, c, "http://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ua.Load() != "quiver-test" {
		t.Fatalf("User-Agent %v", ua.Load())
	}
}
