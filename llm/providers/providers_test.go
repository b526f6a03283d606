package providers_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/turn"
)

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

func TestConnection(t *testing.T) {
	cases := []struct {
		name     string
		cfg      map[string]providers.Provider
		env      env
		provider string
		want     providers.Connection
	}{
		{"nothing set", nil, nil, "openai", providers.Connection{}},
		{"provider variable", nil, env{"OPENAI_API_KEY": "ek", "OPENAI_BASE_URL": "https://proxy.example/v1"}, "openai",
			providers.Connection{Key: "ek", BaseURL: "https://proxy.example/v1"}},
		{"configured key wins", map[string]providers.Provider{"openai": {APIKey: "ck", APIKeyEnv: "MY_KEY"}}, env{"MY_KEY": "mk", "OPENAI_API_KEY": "ek"}, "openai",
			providers.Connection{Key: "ck"}},
		{"api_key_env before the provider variable", map[string]providers.Provider{"openai": {APIKeyEnv: "MY_KEY"}}, env{"MY_KEY": "mk", "OPENAI_API_KEY": "ek"}, "openai",
			providers.Connection{Key: "mk"}},
		{"empty api_key_env falls back", map[string]providers.Provider{"openai": {APIKeyEnv: "MY_KEY"}}, env{"OPENAI_API_KEY": "ek"}, "openai",
			providers.Connection{Key: "ek"}},
		{"configured base URL wins", map[string]providers.Provider{"anthropic": {BaseURL: "https://gw.example"}}, env{"ANTHROPIC_BASE_URL": "https://env.example"}, "anthropic",
			providers.Connection{BaseURL: "https://gw.example"}},
		{"gemini GOOGLE_API_KEY", nil, env{"GOOGLE_API_KEY": "gk"}, "gemini", providers.Connection{Key: "gk"}},
		{"gemini GEMINI_API_KEY first", nil, env{"GOOGLE_API_KEY": "gk", "GEMINI_API_KEY": "mk"}, "gemini", providers.Connection{Key: "mk"}},
		{"openrouter default endpoint", nil, env{"OPENROUTER_API_KEY": "ok"}, "openrouter", providers.Connection{Key: "ok", BaseURL: "https://openrouter.ai/api/v1"}},
		{"ollama default", nil, nil, "ollama", providers.Connection{BaseURL: "http://localhost:11434"}},
		{"OLLAMA_HOST", nil, env{"OLLAMA_HOST": "http://gpu:11434"}, "ollama", providers.Connection{BaseURL: "http://gpu:11434"}},
		{"unknown name reads no variable", nil, env{"LMSTUDIO_API_KEY": "x"}, "lmstudio", providers.Connection{}},
		{"unknown name configured", map[string]providers.Provider{"lmstudio": {BaseURL: "http://127.0.0.1:1234/v1"}}, nil, "lmstudio",
			providers.Connection{BaseURL: "http://127.0.0.1:1234/v1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providers.New(providers.Config{Providers: tc.cfg, Getenv: tc.env.get})
			if d := cmp.Diff(tc.want, s.Connection(tc.provider)); d != "" {
				t.Errorf("Connection(%q) (-want +got):\n%s", tc.provider, d)
			}
		})
	}
}

func TestConfigured(t *testing.T) {
	cases := []struct {
		name     string
		cfg      map[string]providers.Provider
		env      env
		provider string
		want     bool
	}{
		{"nothing", nil, nil, "openai", false},
		{"key from the environment", nil, env{"OPENAI_API_KEY": "k"}, "openai", true},
		{"base URL from the environment only", nil, env{"OPENAI_BASE_URL": "https://x.example"}, "openai", false},
		{"OLLAMA_HOST alone", nil, env{"OLLAMA_HOST": "http://gpu:11434"}, "ollama", false},
		{"named with a base URL", map[string]providers.Provider{"lmstudio": {BaseURL: "http://127.0.0.1:1234/v1"}}, nil, "lmstudio", true},
		{"named with nothing", map[string]providers.Provider{"lmstudio": {}}, nil, "lmstudio", false},
		{"ollama named", map[string]providers.Provider{"ollama": {}}, nil, "ollama", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providers.New(providers.Config{Providers: tc.cfg, Getenv: tc.env.get})
			if got := s.Configured(tc.provider); got != tc.want {
				t.Errorf("Configured(%q) = %v, want %v", tc.provider, got, tc.want)
			}
		})
	}
}

// TestNewKeepsItsOwnConfig: changing the caller's maps after New does not
// reach the Set.
func TestNewKeepsItsOwnConfig(t *testing.T) {
	ps := map[string]providers.Provider{"openai": {APIKey: "first"}}
	s := providers.New(providers.Config{Providers: ps})
	ps["openai"] = providers.Provider{APIKey: "second"}
	if got := s.Connection("openai").Key; got != "first" {
		t.Errorf("key %q after the caller's map changed, want first", got)
	}
}

// stream sends one message through m and returns what the fake saw.
func stream(t *testing.T, m llm.Model, srv *llmtest.Server) llmtest.Seen {
	t.Helper()
	req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}
	resp, err := llm.Collect(m.Stream(context.Background(), req), nil)
	if err != nil || resp.Text != "ok" {
		t.Fatalf("stream: %q, %v", resp.Text, err)
	}
	seen := srv.Seen()
	if len(seen) != 1 {
		t.Fatalf("%d requests, want 1", len(seen))
	}
	return seen[0]
}

// TestOpenAdapters: each provider name opens its adapter, which talks to
// the resolved endpoint with the resolved key, through Config.HTTPClient.
func TestOpenAdapters(t *testing.T) {
	cases := []struct {
		name     string
		fake     llmtest.Fake
		provider string
		// setup returns the Set's providers and environment for srvURL.
		setup func(srvURL string) (map[string]providers.Provider, env)
		// auth is the header carrying the key; "" when none is sent.
		auth, key string
	}{
		{"openai", llmtest.OpenAI{}, "openai", func(u string) (map[string]providers.Provider, env) {
			return nil, env{"OPENAI_API_KEY": "ok-1", "OPENAI_BASE_URL": u}
		}, "Authorization", "Bearer ok-1"},
		{"anthropic", llmtest.Anthropic{}, "anthropic", func(u string) (map[string]providers.Provider, env) {
			return map[string]providers.Provider{"anthropic": {APIKey: "ak-1", BaseURL: u}}, nil
		}, "X-Api-Key", "ak-1"},
		{"gemini", llmtest.Gemini{}, "gemini", func(u string) (map[string]providers.Provider, env) {
			return nil, env{"GOOGLE_API_KEY": "gk-1", "GEMINI_BASE_URL": u}
		}, "X-Goog-Api-Key", "gk-1"},
		{"ollama under /v1", llmtest.OpenAI{}, "ollama", func(u string) (map[string]providers.Provider, env) {
			return nil, env{"OLLAMA_HOST": u + "/"}
		}, "Authorization", ""},
		{"any other name is OpenAI-compatible", llmtest.OpenAI{}, "lmstudio", func(u string) (map[string]providers.Provider, env) {
			return map[string]providers.Provider{"lmstudio": {BaseURL: u + "/v1", APIKeyEnv: "LMS_KEY"}}, env{"LMS_KEY": "lk-1"}
		}, "Authorization", "Bearer lk-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.Start(t, tc.fake, llmtest.Reply{Text: []string{"ok"}})
			ps, e := tc.setup(srv.URL)
			var sent int
			client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
				sent++
				return http.DefaultTransport.RoundTrip(r)
			})}
			s := providers.New(providers.Config{Providers: ps, Getenv: e.get, HTTPClient: client})
			m, notice, err := s.Open(context.Background(), turn.Model{Provider: tc.provider, Name: "m-1", Caps: turn.Capabilities{Tools: true}})
			if err != nil || notice != "" {
				t.Fatalf("Open: %v, notice %q", err, notice)
			}
			if m.Ref() != tc.provider+":m-1" {
				t.Errorf("Ref %q", m.Ref())
			}
			if got := stream(t, m, srv).Header.Get(tc.auth); got != tc.key {
				t.Errorf("%s = %q, want %q", tc.auth, got, tc.key)
			}
			if sent != 1 {
				t.Errorf("%d requests through Config.HTTPClient, want 1", sent)
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOpenCapabilities: Anthropic and Gemini models report their
// adapters' own capabilities whatever the agent declared; an
// OpenAI-compatible endpoint cannot tell, so it reports the declaration.
func TestOpenCapabilities(t *testing.T) {
	declared := turn.Capabilities{Tools: true, Video: true}
	s := providers.New(providers.Config{Getenv: env{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"}.get})
	cases := []struct {
		provider string
		want     turn.Capabilities
	}{
		{"anthropic", turn.Capabilities{Tools: true, ParallelTools: true, Vision: true}},
		{"gemini", turn.Capabilities{Tools: true, ParallelTools: true, Vision: true, Video: true, StructuredOutput: true}},
		{"openai", declared},
	}
	for _, tc := range cases {
		m, _, err := s.Open(context.Background(), turn.Model{Provider: tc.provider, Name: "m", Caps: declared})
		if err != nil {
			t.Fatalf("%s: %v", tc.provider, err)
		}
		if d := cmp.Diff(tc.want, m.Capabilities()); d != "" {
			t.Errorf("%s capabilities (-want +got):\n%s", tc.provider, d)
		}
	}
}

// TestOpenTextTools: a model listed under TextTools is wrapped with the
// text tool protocol (its tools go in the system prompt); others are not.
func TestOpenTextTools(t *testing.T) {
	for _, tc := range []struct {
		ref    string
		listed bool
	}{{"openai:tiny", true}, {"openai:big", false}} {
		srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"ok"}})
		s := providers.New(providers.Config{TextTools: []string{"openai:tiny"}, Getenv: env{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}.get})
		name := strings.TrimPrefix(tc.ref, "openai:")
		m, _, err := s.Open(context.Background(), turn.Model{Provider: "openai", Name: name, Caps: turn.Capabilities{Tools: true}})
		if err != nil {
			t.Fatal(err)
		}
		req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{llmtest.SampleTool()}}
		if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
			t.Fatal(err)
		}
		got := srv.Seen()[0].Req
		inPrompt := len(got.Tools) == 0 && strings.Contains(got.System, llmtest.SampleTool().Name)
		if inPrompt != tc.listed {
			t.Errorf("%s: tools in the prompt %v (native %d), want %v", tc.ref, inPrompt, len(got.Tools), tc.listed)
		}
	}
}

// closedURL is a loopback address nothing listens on.
func closedURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// ollamaTags serves /api/tags with body.
func ollamaTags(t *testing.T, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenNotConnected(t *testing.T) {
	noModels := ollamaTags(t, `{"models":[]}`)
	cases := []struct {
		name  string
		cfg   providers.Config
		model turn.Model
		want  string
	}{
		{"no provider, no Ollama", providers.Config{Getenv: env{"OLLAMA_HOST": closedURL(t)}.get}, turn.Model{Provider: "openai", Name: "m"},
			"no model connected: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (or a provider in --config), or start Ollama on localhost:11434"},
		{"Ollama without models", providers.Config{Getenv: env{"OLLAMA_HOST": noModels.URL}.get}, turn.Model{Provider: "openai", Name: "m"},
			"no model connected: Ollama answered at " + noModels.URL + " but has no models (ollama pull qwen3:8b); or set OPENAI_API_KEY"},
		{"anthropic without its key", providers.Config{Getenv: env{"OPENAI_API_KEY": "k"}.get}, turn.Model{Provider: "anthropic", Name: "claude"},
			"anthropic:claude needs ANTHROPIC_API_KEY; or set OPENAI_API_KEY"},
		{"gemini without its key", providers.Config{Getenv: env{"OPENAI_API_KEY": "k"}.get}, turn.Model{Provider: "gemini", Name: "g"},
			"gemini:g needs GEMINI_API_KEY; or set OPENAI_API_KEY"},
		{"unknown provider", providers.Config{Getenv: env{"OPENAI_API_KEY": "k"}.get}, turn.Model{Provider: "vllm", Name: "v"},
			`vllm:v: provider "vllm" is not configured; set OPENAI_API_KEY`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, notice, err := providers.New(tc.cfg).Open(context.Background(), tc.model)
			var ce *providers.ConnectError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Msg, tc.want) || m != nil || notice != "" {
				t.Fatalf("Open = %v, %q, %v; want a *ConnectError starting %q", m, notice, err, tc.want)
			}
			if strings.Contains(ce.Msg, "\n") {
				t.Errorf("message spans lines: %q", ce.Msg)
			}
		})
	}
}

// TestOpenFallsBackToOllama: with no provider configured, the agent's
// model on Ollama when Ollama has it, else Ollama's first, with a notice;
// the opened model talks to Ollama's OpenAI-compatible endpoint.
func TestOpenFallsBackToOllama(t *testing.T) {
	for _, tc := range []struct{ want, got string }{{"qwen3:8b", "qwen3:8b"}, {"gpt-4.1-mini", "llama3:8b"}} {
		var chats int
		chat := llmtest.OpenAI{}.Handler(t, func(llmtest.Seen) llmtest.Reply {
			chats++
			return llmtest.Reply{Text: []string{"ok"}}
		})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/tags" {
				w.Write([]byte(`{"models":[{"name":"llama3:8b"},{"name":"qwen3:8b"}]}`))
				return
			}
			chat.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		var probes int
		probe := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			probes++
			return http.DefaultTransport.RoundTrip(r)
		})}
		var log bytes.Buffer
		s := providers.New(providers.Config{Getenv: env{"OLLAMA_HOST": srv.URL}.get, Probe: probe, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		m, notice, err := s.Open(context.Background(), turn.Model{Provider: "openai", Name: tc.want, Caps: turn.Capabilities{Tools: true}})
		if err != nil {
			t.Fatal(err)
		}
		if probes != 1 {
			t.Errorf("%d probes through Config.Probe, want 1", probes)
		}
		if !strings.Contains(log.String(), "falling back to Ollama") || !strings.Contains(log.String(), "model="+tc.got) {
			t.Errorf("log %q does not record the fallback", log.String())
		}
		if m.Ref() != "ollama:"+tc.got || notice != "no model provider is configured; using ollama:"+tc.got+" from "+srv.URL {
			t.Errorf("want %s: Ref %q, notice %q", tc.want, m.Ref(), notice)
		}
		if !m.Capabilities().Tools {
			t.Errorf("the fallback model lost the declared tools: %+v", m.Capabilities())
		}
		req := llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}
		if resp, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil || resp.Text != "ok" || chats != 1 {
			t.Errorf("stream: %q, %v after %d chat requests", resp.Text, err, chats)
		}
	}
}

// TestOpenNoFallbackWhenConfigured: a configured provider, even another
// one, means a missing key is an error, not a silent switch to Ollama.
func TestOpenNoFallbackWhenConfigured(t *testing.T) {
	var probed bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probed = true
		w.Write([]byte(`{"models":[{"name":"qwen3:8b"}]}`))
	}))
	t.Cleanup(srv.Close)
	for _, cfg := range []providers.Config{
		{Getenv: env{"OLLAMA_HOST": srv.URL, "GEMINI_API_KEY": "k"}.get},
		{Getenv: env{"OLLAMA_HOST": srv.URL}.get, Providers: map[string]providers.Provider{"lmstudio": {BaseURL: "http://127.0.0.1:1/v1"}}},
	} {
		_, _, err := providers.New(cfg).Open(context.Background(), turn.Model{Provider: "anthropic", Name: "claude"})
		var ce *providers.ConnectError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "needs ANTHROPIC_API_KEY") {
			t.Errorf("Open: %v, want the missing key", err)
		}
	}
	if probed {
		t.Error("Ollama was probed although a provider is configured")
	}
}

// TestNewHTTPClient: no overall timeout, and an idle pool for many
// concurrent turns to one provider.
func TestNewHTTPClient(t *testing.T) {
	c := providers.NewHTTPClient()
	if c.Timeout != 0 {
		t.Errorf("Timeout %v, want none (the turn's context bounds a stream)", c.Timeout)
	}
	tr, ok := c.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport %T", c.Transport)
	}
	if tr.MaxIdleConnsPerHost != 64 || tr.MaxIdleConns != 256 {
		t.Errorf("idle pool %d per host, %d in all; want 64 and 256", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
	if tr == http.DefaultTransport || providers.NewHTTPClient().Transport == c.Transport {
		t.Error("transport shared: each client must have its own")
	}
}

// TestOpener: a Set's Opener opens what Set.Open opens, the Ollama
// fallback included (its notice only logged), and fails as it fails.
func TestOpener(t *testing.T) {
	srv := ollamaTags(t, `{"models":[{"name":"qwen3:8b"}]}`)
	var log bytes.Buffer
	s := providers.New(providers.Config{Getenv: env{"OLLAMA_HOST": srv.URL}.get, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	m, err := s.Opener().Open(context.Background(), turn.Model{Provider: "openai", Name: "qwen3:8b"})
	if err != nil || m.Ref() != "ollama:qwen3:8b" || !strings.Contains(log.String(), "falling back to Ollama") {
		t.Errorf("Opener().Open = %v, %v (log %q); want ollama:qwen3:8b with the fallback logged", m, err, log.String())
	}
	noKey := providers.New(providers.Config{Getenv: env{"OPENAI_API_KEY": "k"}.get})
	m, err = noKey.Opener().Open(context.Background(), turn.Model{Provider: "anthropic", Name: "claude"})
	var ce *providers.ConnectError
	if m != nil || !errors.As(err, &ce) || !strings.HasPrefix(ce.Msg, "anthropic:claude needs ANTHROPIC_API_KEY") {
		t.Errorf("Opener().Open without the key = %v, %v; want a *ConnectError", m, err)
	}
}

// TestSharedSet: a Set made through Shared reads the shared environment,
// whatever the configuration's own Getenv says.
func TestSharedSet(t *testing.T) {
	sh := providers.Shared{Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "shared-key"
		}
		return ""
	}}
	set := sh.Set(providers.Config{Getenv: func(string) string { return "ignored" }})
	if got := set.Connection("openai").Key; got != "shared-key" {
		t.Errorf("key %q, want the shared environment's", got)
	}
}

// TestOpenSharesToolCaches: the models a Set with ToolCaches opens keep
// their tool declarations in the adapter's cache, one list for the two
// models' equal requests.
func TestOpenSharesToolCaches(t *testing.T) {
	for _, tc := range []struct {
		provider string
		fake     llmtest.Fake
		held     func(*providers.ToolCaches) int
	}{
		{"openai", llmtest.OpenAI{}, func(c *providers.ToolCaches) int { return c.OpenAI.Len() }},
		{"anthropic", llmtest.Anthropic{}, func(c *providers.ToolCaches) int { return c.Anthropic.Len() }},
		{"gemini", llmtest.Gemini{}, func(c *providers.ToolCaches) int { return c.Gemini.Len() }},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			srv := llmtest.Start(t, tc.fake, llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Text: []string{"ok"}})
			caches := providers.NewToolCaches(0)
			s := providers.New(providers.Config{Providers: map[string]providers.Provider{tc.provider: {APIKey: "k", BaseURL: srv.URL}}, Tools: caches})
			for range 2 {
				m, _, err := s.Open(context.Background(), turn.Model{Provider: tc.provider, Name: "m-1", Caps: turn.Capabilities{Tools: true}})
				if err != nil {
					t.Fatal(err)
				}
				req := llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{llmtest.SampleTool()}}
				if _, err := llm.Collect(m.Stream(context.Background(), req), nil); err != nil {
					t.Fatal(err)
				}
			}
			if n := tc.held(caches); n != 1 {
				t.Errorf("%d lists in the %s cache, want 1", n, tc.provider)
			}
		})
	}
}
