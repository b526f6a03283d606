//go:build unix

package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
)

// This file runs the chain against a real SearXNG-compatible peer: Debian's
// searx package (1.1.0), started on loopback with
// testdata/searx/settings.yml.tmpl. Its stock engines are gone (the file
// replaces the settings outright) and its one engine, a json_engine, asks a
// fake on loopback, so nothing leaves the machine. scripts/test installs the
// package; without it the test skips.

const searxRun = "searx-run" // the package's console entry point (searx.webapp:run)

// searxEngine is the loopback fake behind searx's json_engine. It answers
// /search with its current results in the shape the settings' queries read
// (results[].url, .title, .content) and records the queries it was asked.
type searxEngine struct {
	srv *httptest.Server

	mu      sync.Mutex
	results []map[string]string
	queries []string
}

func newSearxEngine(t *testing.T) *searxEngine {
	e := &searxEngine{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		e.mu.Lock()
		e.queries = append(e.queries, r.URL.Query().Get("q"))
		body := map[string]any{"results": e.results}
		e.mu.Unlock()
		if body["results"] == nil {
			body["results"] = []any{}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *searxEngine) set(results []map[string]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.results = results
}

func (e *searxEngine) asked() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.queries...)
}

// searxPeer is a running searx process.
type searxPeer struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	log  *syncWriter   // searx's stdout and stderr
}

// startSearx renders the settings for engineURL and starts searx on a free
// loopback port, with its own HOME and TMPDIR and an environment holding
// nothing from ours (no proxies). It returns once /healthz answers 200,
// polling a bounded number of times. t.Cleanup kills the process group and
// checks that nothing of it is left.
func startSearx(t *testing.T, engineURL string) *searxPeer {
	t.Helper()
	bin, err := exec.LookPath(searxRun)
	if err != nil {
		t.Skipf("Debian's searx package is not installed (no %s on PATH); scripts/test installs it", searxRun)
	}
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "searx", "settings.yml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	// A port picked here may be taken before searx binds it; then searx
	// exits and we try another.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		p, err := launchSearx(t, bin, tmpl, engineURL)
		if err == nil {
			return p
		}
		lastErr = err
	}
	t.Fatalf("searx did not start: %v", lastErr)
	return nil
}

func launchSearx(t *testing.T, bin string, tmpl *template.Template, engineURL string) (*searxPeer, error) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var settings bytes.Buffer
	if err := tmpl.Execute(&settings, map[string]any{"Port": port, "EngineURL": engineURL}); err != nil {
		t.Fatal(err)
	}
	settingsPath := filepath.Join(dir, "settings.yml")
	if err := os.WriteFile(settingsPath, settings.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	p := &searxPeer{URL: "http://127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{}), log: &syncWriter{}}
	p.cmd = exec.Command(bin)
	p.cmd.Dir = dir
	p.cmd.Env = []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
		"SEARX_SETTINGS_PATH=" + settingsPath,
		"SEARX_DEBUG=0",
		"NO_PROXY=*",
		"PYTHONDONTWRITEBYTECODE=1",
	}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	pgid := p.cmd.Process.Pid
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		// The whole group must be gone, not just the process we started.
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("searx process group %d still present after kill (%v)", pgid, err)
		}
	})

	// Readiness: poll /healthz, at most 200 times 50 ms apart (10 s), and
	// stop early if the process exits.
	client := &http.Client{Timeout: time.Second}
	for i := 0; i < 200; i++ {
		select {
		case <-p.done:
			return nil, fmt.Errorf("exited before it was ready: %s\nlog:\n%s", p.cmd.ProcessState, p.logText())
		default:
		}
		resp, err := client.Get(p.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("searx on %s not ready after 200 polls; log:\n%s", p.URL, p.logText())
	return nil, nil
}

func (p *searxPeer) logText() string {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return p.log.buf.String()
}

// syncWriter is a buffer safe for exec's copying goroutines.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func TestSearxPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a searx process")
	}
	engine := newSearxEngine(t)
	peer := startSearx(t, engine.srv.URL)
	ctx := context.Background()

	t.Run("results in real SearXNG JSON", func(t *testing.T) {
		engine.set([]map[string]string{
			{"url": "https://go.dev/doc/tutorial/generics", "title": "Tutorial: Getting started with generics", "content": "This tutorial introduces the basics of generics in Go."},
			{"url": "https://go.dev/blog/intro-generics", "title": "An Introduction To Generics", "content": "Generics are a way of writing code that is independent of the specific types being used."},
		})
		s := NewSearXNG(peer.URL, nil, nil, 0, 0)
		if !s.Available(ctx) {
			t.Fatalf("searx /healthz probe failed; log:\n%s", peer.logText())
		}
		got, err := s.Search(ctx, Query{Text: "go generics", Count: 5})
		if err != nil {
			t.Fatalf("Search: %v; log:\n%s", err, peer.logText())
		}
		want := []Result{
			{Title: "Tutorial: Getting started with generics", URL: "https://go.dev/doc/tutorial/generics", Snippet: "This tutorial introduces the basics of generics in Go.", Source: "searxng"},
			{Title: "An Introduction To Generics", URL: "https://go.dev/blog/intro-generics", Snippet: "Generics are a way of writing code that is independent of the specific types being used.", Source: "searxng"},
		}
		// searx scores a result by its position in the engine's answer,
		// so the fake's order survives.
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		if q := engine.asked(); len(q) == 0 || q[len(q)-1] != "go generics" {
			t.Errorf("fake engine asked %q, want the query to reach it", q)
		}
	})

	t.Run("empty answer hands over to the next engine", func(t *testing.T) {
		engine.set(nil)
		before := len(engine.asked())
		ddg := newFake(t, ok(t, "ddg_results.html"))
		chain := NewChain([]Engine{
			NewSearXNG(peer.URL, nil, nil, 0, 0),
			NewDuckDuckGo(ddg.srv.URL+"/html/", "", nil, nil),
		}, ChainOptions{})
		out, err := chain.Search(ctx, Query{Text: "nothing matches this"})
		if err != nil {
			t.Fatalf("Search: %v; log:\n%s", err, peer.logText())
		}
		if out.Engine != "duckduckgo" || len(out.Results) == 0 {
			t.Errorf("served by %q with %d results, want duckduckgo with results", out.Engine, len(out.Results))
		}
		if diff := cmp.Diff([]Failure{{Engine: "searxng", Kind: Empty}}, out.Failures); diff != "" {
			t.Errorf("failures (-want +got):\n%s", diff)
		}
		if got, want := out.Trailer(), "searxng: no results; used duckduckgo"; got != want {
			t.Errorf("trailer %q, want %q", got, want)
		}
		if q := engine.asked(); len(q) != before+1 || q[len(q)-1] != "nothing matches this" {
			t.Errorf("fake engine asked %q after %d earlier queries, want one more for the query", q, before)
		}
		if hits, _ := ddg.counts(); hits != 1 {
			t.Errorf("duckduckgo fake hit %d times, want 1", hits)
		}
	})
}
