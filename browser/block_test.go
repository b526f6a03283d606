package browser_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/browser"
)

// sinks are loopback listeners that count every connection or packet
// that reaches them: an HTTP server, a raw TCP listener (WebSocket) and a
// UDP socket (WebRTC's STUN). A fence (a connection or packet of the
// test's own, sent last) proves every earlier arrival was counted, so the
// zero counts need no waiting.
type sinks struct {
	http *httptest.Server
	tcp  net.Listener
	udp  net.PacketConn

	mu              sync.Mutex
	httpConns, tcps int
	packets         int
	fence           chan struct{}
	seen            []string
}

func newSinks(t *testing.T) *sinks {
	t.Helper()
	s := &sinks{fence: make(chan struct{}, 3)}
	s.http = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.URL.Path)
		s.mu.Unlock()
	}))
	s.http.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.httpConns++
			s.mu.Unlock()
		}
	}
	s.http.Start()
	t.Cleanup(s.http.Close)
	var err error
	if s.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.tcp.Close() })
	go func() {
		for {
			c, err := s.tcp.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.tcps++
			s.mu.Unlock()
			if c.RemoteAddr().String() == s.lastFence() {
				s.fence <- struct{}{}
			}
			c.Close()
		}
	}()
	if s.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.udp.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := s.udp.ReadFrom(buf)
			if err != nil {
				return
			}
			if string(buf[:n]) == "fence" {
				s.fence <- struct{}{}
				continue
			}
			s.mu.Lock()
			s.packets++
			s.mu.Unlock()
		}
	}()
	return s
}

var fenceAddr struct {
	sync.Mutex
	addr string
}

func (s *sinks) lastFence() string {
	fenceAddr.Lock()
	defer fenceAddr.Unlock()
	return fenceAddr.addr
}

// counts sends the fences, waits for them, and returns the connections
// and packets that arrived before them, the fences not included.
func (s *sinks) counts(t *testing.T) (httpConns, tcps, packets int, paths []string) {
	t.Helper()
	// HTTP: a request of our own; ConnState runs before it is served.
	resp, err := http.Get(s.http.URL + "/fence")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// TCP: the accept loop handles connections in order.
	d := net.Dialer{}
	fenceAddr.Lock()
	c, err := d.Dial("tcp", s.tcp.Addr().String())
	if err == nil {
		fenceAddr.addr = c.LocalAddr().String()
	}
	fenceAddr.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// UDP: datagrams on one socket are read in order.
	u, err := net.Dial("udp", s.udp.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, err := u.Write([]byte("fence")); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second) // a safety net, not a synchronisation
	for range 2 {
		select {
		case <-s.fence:
		case <-timeout:
			t.Fatal("the fences never arrived")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpConns - 1, s.tcps - 1, s.packets, slices.DeleteFunc(slices.Clone(s.seen), func(p string) bool { return p == "/fence" })
}

// TestNothingReachesTheNetwork renders documents that try every route
// to the loopback sinks and the metadata address, and asserts that no
// connection or packet arrived and that each attempt is listed blocked.
func TestNothingReachesTheNetwork(t *testing.T) {
	c := checker(t)
	s := newSinks(t)
	base := s.http.URL
	host := strings.TrimPrefix(base, "http://")
	_, port, _ := net.SplitHostPort(host)
	ws := "ws://" + s.tcp.Addr().String()
	udp := s.udp.LocalAddr().String()
	subresources := fmt.Sprintf(`<!doctype html><html><head>
<link rel="stylesheet" href="%[1]s/stylesheet">
<link rel="prefetch" href="%[1]s/prefetch">
<link rel="preload" as="image" href="%[1]s/preload">
<link rel="preconnect" href="%[1]s">
<link rel="dns-prefetch" href="//quiver-test.example">
<link rel="icon" href="%[1]s/favicon">
<style>
@import url("%[1]s/import");
@font-face { font-family: far; src: url("%[1]s/font"); }
body { background: url("%[1]s/cssurl"); font-family: far; }
</style>
<script src="%[1]s/script"></script>
</head><body>
<p>text in the far font</p>
<img src="%[1]s/img">
<img srcset="%[1]s/srcset 2x">
<picture><source srcset="%[1]s/picture"><img alt=""></picture>
<video src="%[1]s/video" autoplay muted></video>
<audio src="%[1]s/audio" autoplay></audio>
<object data="%[1]s/object"></object>
<embed src="%[1]s/embed">
<iframe src="%[1]s/iframe"></iframe>
<iframe srcdoc="<img src='%[1]s/srcdoc'>"></iframe>
<svg width="10" height="10"><image href="%[1]s/svgimage" width="10" height="10"/></svg>
<script>
fetch("%[1]s/fetch").catch(() => {});
fetch("http://169.254.169.254/latest/meta-data/").catch(() => {});
fetch("http://localhost:%[2]s/byname").catch(() => {});
const x = new XMLHttpRequest(); x.open("GET", "%[1]s/xhr"); x.send();
try { new WebSocket("%[3]s/ws"); } catch (e) {}
navigator.sendBeacon("%[1]s/beacon", "x");
try { new EventSource("%[1]s/eventsource"); } catch (e) {}
if (navigator.serviceWorker) navigator.serviceWorker.register("%[1]s/sw.js").catch(() => {});
try { new Worker("%[1]s/worker.js"); } catch (e) {}
const w = window.open("%[1]s/popup");
if (w) console.error("window.open returned a window");
try {
  const pc = new RTCPeerConnection({iceServers: [{urls: "stun:%[4]s"}, {urls: "turn:%[4]s?transport=udp", username: "u", credential: "c"}]});
  pc.createDataChannel("d");
  pc.createOffer().then(o => pc.setLocalDescription(o)).catch(() => {});
} catch (e) {}
</script>
</body></html>`, base, port, ws, udp)

	cases := []struct {
		name    string
		html    string
		blocked []string // paths (or whole URLs) that must be listed
	}{
		{"subresources", subresources, []string{"/stylesheet", "/import", "/cssurl", "/font", "/script",
			"/img", "/srcset", "/video", "/object", "/iframe", "/srcdoc", "/svgimage",
			"/fetch", "/xhr", "/ws", "/beacon", "/eventsource", "/prefetch", "/preload",
			"http://169.254.169.254/latest/meta-data/", "http://localhost:" + port + "/byname"}},
		{"form auto-submit", fmt.Sprintf(`<p>still here</p><form id="f" method="post" action="%s/form"><input name="a" value="1"></form><script>document.getElementById("f").submit()</script>`, base), []string{"/form"}},
		{"meta refresh", fmt.Sprintf(`<meta http-equiv="refresh" content="0; url=%s/refresh"><p>still here</p>`, base), []string{"/refresh"}},
		{"location change", fmt.Sprintf(`<p>still here</p><script>location.href = "%s/location"</script>`, base), []string{"/location"}},
		{"link click", fmt.Sprintf(`<p>still here</p><a id="a" href="%s/click">go</a><script>document.getElementById("a").click()</script>`, base), []string{"/click"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := inspect(t, c, tc.html)
			for _, want := range tc.blocked {
				if !strings.HasPrefix(want, "http") && !strings.HasPrefix(want, "ws") {
					if want == "/ws" {
						want = ws + want
					} else {
						want = base + want
					}
				}
				if !slices.Contains(p.Blocked, want) {
					t.Errorf("blocked lacks %s; got %v", want, p.Blocked)
				}
			}
			for _, m := range p.Console {
				if m.Text == "window.open returned a window" {
					t.Error("window.open opened a window")
				}
			}
			if tc.name != "subresources" && !strings.Contains(p.Description, `"still here"`) {
				t.Errorf("the page was navigated away; description:\n%s", p.Description)
			}
		})
	}
	// A script that navigated must not have taken the tab away: the
	// checker still works, and the sinks saw nothing at all.
	_ = inspect(t, c, `<p>after</p>`)
	httpConns, tcps, packets, paths := s.counts(t)
	if httpConns != 0 || tcps != 0 || packets != 0 || len(paths) != 0 {
		t.Fatalf("reached the sinks: %d HTTP connections (paths %v), %d TCP connections, %d UDP packets; want none",
			httpConns, paths, tcps, packets)
	}
}

// TestAPageThatNeverYieldsFails: a script stuck in a loop ends its page
// with an error at the deadline, and the browser keeps working.
func TestAPageThatNeverYieldsFails(t *testing.T) {
	checker(t) // skips without a browser
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := browser.NewChromium(ctx, browser.Options{PageTimeout: 3 * time.Second, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, html := range []string{`<script>while (true) {}</script>`, `<p>x</p><script>setTimeout(() => { while (true) {} }, 0)</script>`} {
		_, err = c.Inspect(ctx, browser.Document{Kind: browser.HTML, Content: html}, nil)
		if err == nil || !strings.Contains(err.Error(), "did not finish") {
			t.Errorf("%s: err = %v, want the page deadline", html, err)
		}
	}
	p := inspect(t, c, `<p id="ok">fine</p>`)
	if !strings.Contains(p.Description, "Document") {
		t.Errorf("after a hung page: description %q", p.Description)
	}
}
