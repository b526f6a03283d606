package providers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/providers"
	"github.com/quiverhq/quiver/netguard"
	"github.com/quiverhq/quiver/turn"
)

// serve answers every request with h on loopback.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// rawList answers body as the model list.
func rawList(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
}

func TestListModels(t *testing.T) {
	ctx := context.Background()
	models := llmtest.Models{IDs: []string{"qwen3:8b", "llama3.2", "qwen3:8b", "", "bad\x00id", strings.Repeat("x", 300)}, Key: "sk-local"}
	base := serve(t, models)
	for _, tc := range []struct {
		name, provider, base, key string
		want                      providers.ModelList
		err                       string
	}{
		{name: "an OpenAI-compatible server, its key sent", provider: "lmstudio", base: base + "/v1/", key: "sk-local",
			want: providers.ModelList{URL: base + "/v1/models", Models: []string{"llama3.2", "qwen3:8b"}}},
		{name: "ollama lists under /v1", provider: "ollama", base: base, key: "sk-local",
			want: providers.ModelList{URL: base + "/v1/models", Models: []string{"llama3.2", "qwen3:8b"}}},
		{name: "no key", provider: "vllm", base: base + "/v1", err: "the server answered 401 Unauthorized: check the key"},
		{name: "a wrong base URL", provider: "vllm", base: base + "/api", key: "sk-local", err: "404 Not Found for " + base + "/api/models: check the base URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := providers.ListModels(ctx, http.DefaultClient, tc.provider, tc.base, tc.key)
			if tc.err != "" {
				var le *providers.ListError
				if !errors.As(err, &le) || !strings.Contains(le.Msg, tc.err) {
					t.Fatalf("err %v, want a *ListError with %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "sk-local") {
					t.Errorf("the error %q holds the key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("list (-want +got):\n%s", d)
			}
		})
	}
}

// TestListModelsBounds: a model list longer than MaxModelListBytes is
// refused (a valid one: without the cap it would be read whole), and
// more than MaxListedModels models are cut there.
func TestListModelsBounds(t *testing.T) {
	ctx := context.Background()
	var long strings.Builder
	long.WriteString(`{"object":"list","data":[`)
	for i := 0; long.Len() <= providers.MaxModelListBytes; i++ {
		if i > 0 {
			long.WriteString(",")
		}
		fmt.Fprintf(&long, `{"id":"model-%06d-%s","object":"model"}`, i, strings.Repeat("a", 40))
	}
	long.WriteString(`]}`)
	_, err := providers.ListModels(ctx, http.DefaultClient, "vllm", serve(t, rawList(long.String())), "")
	var le *providers.ListError
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "longer than 1024 KiB") {
		t.Errorf("a %d-byte list: %v, want refused as too long", long.Len(), err)
	}

	ids := make([]string, providers.MaxListedModels+100)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%04d", i)
	}
	got, err := providers.ListModels(ctx, http.DefaultClient, "vllm", serve(t, llmtest.Models{IDs: ids}), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Models) != providers.MaxListedModels || !got.Truncated || got.Models[0] != "m0000" {
		t.Errorf("%d of %d models, truncated %v, first %q; want the first %d, truncated", len(got.Models), len(ids), got.Truncated, got.Models[0], providers.MaxListedModels)
	}
}

func TestListModelsNotAList(t *testing.T) {
	ctx := context.Background()
	for name, body := range map[string]string{
		"html":    "<html><body>It works!</body></html>",
		"no data": `{"models":[{"name":"qwen3:8b"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := providers.ListModels(ctx, http.DefaultClient, "vllm", serve(t, rawList(body)), "")
			var le *providers.ListError
			if !errors.As(err, &le) || !strings.Contains(le.Msg, "not an OpenAI-compatible model list") {
				t.Errorf("%v, want refused as not a model list", err)
			}
		})
	}
	_, err := providers.ListModels(ctx, http.DefaultClient, "vllm", "http://127.0.0.1:1", "")
	var le *providers.ListError
	if !errors.As(err, &le) || !strings.HasPrefix(le.Msg, "the server did not answer: ") {
		t.Errorf("nothing listening: %v", err)
	}
}

// TestGuardedProvider: a provider an organisation connected (Guarded) is
// reached through the guarded client in Config.Network's mode, never
// through Config.HTTPClient: a loopback server is refused in public mode
// and reached in self-hosted mode.
func TestGuardedProvider(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		blocked bool
	}{{"public", true}, {"", true}, {"self-hosted", false}} {
		t.Run("mode "+tc.mode, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.OpenAI{}, llmtest.Reply{Text: []string{"ok"}})
			shared := 0
			s := providers.New(providers.Config{
				Providers: map[string]providers.Provider{"lmstudio": {BaseURL: srv.URL + "/v1", Guarded: true}},
				Network:   tc.mode,
				HTTPClient: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
					shared++
					return http.DefaultTransport.RoundTrip(r)
				})},
			})
			m, _, err := s.Open(context.Background(), turn.Model{Provider: "lmstudio", Name: "tiny"})
			if err != nil {
				t.Fatal(err)
			}
			req := llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}}
			resp, err := llm.Collect(m.Stream(context.Background(), req), nil)
			if tc.blocked {
				e, ok := llm.AsError(err)
				if !ok || e.Kind != llm.ErrBadRequest || e.Retryable() || !strings.Contains(e.Msg, netguard.ErrBlocked.Error()) || len(srv.Seen()) != 0 {
					t.Errorf("stream: %q, %v after %d requests; want refused (not retried) before any", resp.Text, err, len(srv.Seen()))
				}
			} else if err != nil || resp.Text != "ok" || len(srv.Seen()) != 1 {
				t.Errorf("stream: %q, %v after %d requests", resp.Text, err, len(srv.Seen()))
			}
			if shared != 0 {
				t.Errorf("%d requests went through the shared client", shared)
			}
		})
	}
}

// answer is a Doer that answers every request with body, without a
// network.
type answer string

func (a answer) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(string(a))), Request: r}, nil
}

// FuzzListModels: whatever a server answers, ListModels never fails but
// with a *ListError, and a list it returns is sorted, distinct, at most
// MaxListedModels, with no empty id and no control character.
func FuzzListModels(f *testing.F) {
	for _, seed := range []string{
		`{"object":"list","data":[{"id":"qwen3:8b"},{"id":"llama3.2"}]}`,
		`{"data":[{"id":""},{"id":" a "},{"id":"a"},{"id":"b\u0000c"}]}`,
		`{"data":null}`, `{"data":[1,2]}`, `[]`, `<html>`, ``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := providers.ListModels(context.Background(), answer(body), "vllm", "http://models.test/v1", "")
		if err != nil {
			var le *providers.ListError
			if !errors.As(err, &le) {
				t.Fatalf("%v, want a *ListError", err)
			}
			return
		}
		if len(got.Models) > providers.MaxListedModels || !slices.IsSorted(got.Models) || len(slices.Compact(slices.Clone(got.Models))) != len(got.Models) {
			t.Fatalf("models %q: want sorted, distinct, at most %d", got.Models, providers.MaxListedModels)
		}
		for _, id := range got.Models {
			if id == "" || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) || strings.TrimSpace(id) != id {
				t.Fatalf("id %q kept", id)
			}
		}
	})
}
