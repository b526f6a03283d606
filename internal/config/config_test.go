package config_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/internal/config"
)

// TestSecretsKeyring: each key source gives its keyring, none gives nil,
// and a source that cannot be read is an error naming the setting.
func TestSecretsKeyring(t *testing.T) {
	key := "k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 32)))
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	if err := os.WriteFile(file, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KEYS": key, "BAD": "k1:short"}
	tests := []struct {
		name    string
		s       config.Secrets
		wantID  string
		wantErr string
	}{
		{"none", config.Secrets{}, "", ""},
		{"key file", config.Secrets{KeyFile: file}, "k1", ""},
		{"keys env", config.Secrets{KeysEnv: "KEYS"}, "k1", ""},
		{"readable by others", config.Secrets{KeyFile: open}, "", "secrets.key_file: "},
		{"missing file", config.Secrets{KeyFile: filepath.Join(dir, "nope")}, "", "secrets.key_file: "},
		{"empty env", config.Secrets{KeysEnv: "UNSET"}, "", "secrets.keys_env: $UNSET is empty"},
		{"bad env", config.Secrets{KeysEnv: "BAD"}, "", "secrets.keys_env $BAD: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kr, err := tc.s.Keyring(func(k string) string { return env[k] })
			switch {
			case tc.wantErr != "":
				if kr != nil || err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("Keyring = %v, %v; want an error starting %q", kr, err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantID == "" && kr != nil:
				t.Errorf("Keyring = %v, want nil", kr)
			case tc.wantID != "" && (kr == nil || kr.PrimaryID() != tc.wantID):
				t.Errorf("Keyring = %v, want primary %s", kr, tc.wantID)
			}
		})
	}
}

// TestAgentPrices: the configured prices reach the loop unchanged, by
// reference; none gives an empty map.
func TestAgentPrices(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("prices:\n  'openai:gpt-4.1-mini': {input: 0.4, cached_input: 0.1, cache_write: 0.5, output: 1.6}\n  'ollama:qwen3': {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]agent.Price{
		"openai:gpt-4.1-mini": {Input: 0.4, CachedInput: 0.1, CacheWrite: 0.5, Output: 1.6},
		"ollama:qwen3":        {},
	}
	if diff := cmp.Diff(want, cfg.AgentPrices()); diff != "" {
		t.Errorf("AgentPrices (-want +got):\n%s", diff)
	}
	if got := (config.Config{}).AgentPrices(); got == nil || len(got) != 0 {
		t.Errorf("AgentPrices of no prices = %#v, want empty", got)
	}
}

// TestDatabaseURL: the environment's URL wins, then url_env's variable,
// then the file's url; "" is SQLite. Bad URLs and clashing settings are
// refused without quoting the URL, which may hold a password.
func TestDatabaseURL(t *testing.T) {
	const pg = "postgres://quiver:s3cret@127.0.0.1:5432/quiver"
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		db   config.Database
		env  map[string]string
		want string
		err  string
	}{
		{name: "sqlite by default"},
		{name: "file url", db: config.Database{URL: pg}, want: pg},
		{name: "url_env", db: config.Database{URLEnv: "PG"}, env: map[string]string{"PG": pg}, want: pg},
		{name: "environment wins", db: config.Database{URL: "postgres://other/db"}, env: map[string]string{config.DatabaseURLEnv: pg}, want: pg},
		{name: "empty url_env", db: config.Database{URLEnv: "PG"}, err: "database.url_env: $PG is empty"},
		{name: "environment not postgres", env: map[string]string{config.DatabaseURLEnv: "mysql://u:s3cret@h/db"}, err: "$QUIVER_DATABASE_URL: give a postgres:// or postgresql:// URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.Config{Database: tc.db}.DatabaseURL(env(tc.env))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("DatabaseURL = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{
		"database:\n  url: mysql://u:s3cret@h/db\n",
		"database:\n  url: postgres://u:s3cret@h/db\n  url_env: PG\n",
	} {
		_, err := config.ParseConfig([]byte(bad))
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("config.ParseConfig(%q) = %v, want an error without the password", bad, err)
		}
	}
}

// TestDataDir: --data, then $QUIVER_DATA, then $XDG_DATA_HOME/quiver,
// then ~/.local/share/quiver; nothing to go on is an error.
func TestDataDir(t *testing.T) {
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string
	}{
		{flag: "/f", env: map[string]string{"QUIVER_DATA": "/q"}, want: "/f"},
		{env: map[string]string{"QUIVER_DATA": "/q", "XDG_DATA_HOME": "/x"}, want: "/q"},
		{env: map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, want: "/x/quiver"},
		{env: map[string]string{"HOME": "/h"}, want: "/h/.local/share/quiver"},
	} {
		got, err := config.DataDir(tc.flag, func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("DataDir(%q, %v) = %q, %v; want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
	if _, err := config.DataDir("", func(string) string { return "" }); err == nil {
		t.Error("DataDir with nothing to go on succeeded")
	}
}

// TestMCPRecheckTTL: mcp.recheck_ttl takes a duration up to 1m, 0 the
// default; a longer or negative one is refused with one error.
func TestMCPRecheckTTL(t *testing.T) {
	for _, tc := range []struct {
		yaml    string
		wantErr bool
	}{
		{"mcp:\n  recheck_ttl: 500ms\n", false},
		{"mcp:\n  recheck_ttl: 0s\n", false},
		{"mcp:\n  recheck_ttl: 2m\n", true},
		{"mcp:\n  recheck_ttl: -1s\n", false}, // no reuse
	} {
		_, err := config.ParseConfig([]byte(tc.yaml))
		if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), "mcp.recheck_ttl")) {
			t.Errorf("ParseConfig(%q) = %v, want error %t naming mcp.recheck_ttl", tc.yaml, err, tc.wantErr)
		}
	}
}

// TestPromptCache: prompt_cache takes 0 (the default) up to 100000.
func TestPromptCache(t *testing.T) {
	for yaml, wantErr := range map[string]bool{"prompt_cache: 64\n": false, "prompt_cache: 0\n": false, "prompt_cache: -1\n": true, "prompt_cache: 100001\n": true} {
		_, err := config.ParseConfig([]byte(yaml))
		if (err != nil) != wantErr || (err != nil && !strings.Contains(err.Error(), "prompt_cache")) {
			t.Errorf("ParseConfig(%q) = %v, want error %t naming prompt_cache", yaml, err, wantErr)
		}
	}
}

// TestSelectionCache: selection_cache takes 0 (the default) up to 100000.
func TestSelectionCache(t *testing.T) {
	for yaml, wantErr := range map[string]bool{"selection_cache: 64\n": false, "selection_cache: 0\n": false, "selection_cache: -1\n": true, "selection_cache: 100001\n": true} {
		_, err := config.ParseConfig([]byte(yaml))
		if (err != nil) != wantErr || (err != nil && !strings.Contains(err.Error(), "selection_cache")) {
			t.Errorf("ParseConfig(%q) = %v, want error %t naming selection_cache", yaml, err, wantErr)
		}
	}
}

// TestIntentClassifier: intent.classifier is on (the default) or off,
// and its shift lies in -0.5..0.5; anything else is one error naming it.
func TestIntentClassifier(t *testing.T) {
	for yaml, want := range map[string]string{
		"intent:\n  classifier: off\n":        "",
		"intent:\n  classifier_shift: -0.2\n": "",
		"intent:\n  classifier: maybe\n":      "intent.classifier",
		"intent:\n  classifier_shift: 0.6\n":  "intent.classifier_shift",
		"intent:\n  classifier_shift: .nan\n": "intent.classifier_shift",
	} {
		c, err := config.ParseConfig([]byte(yaml))
		switch {
		case want == "" && err != nil:
			t.Errorf("ParseConfig(%q): %v", yaml, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ParseConfig(%q) = %v, want an error naming %s", yaml, err, want)
		case want == "" && strings.Contains(yaml, "off") && c.Intent.ClassifierOn():
			t.Errorf("ParseConfig(%q): the classifier is still on", yaml)
		}
	}
}

// TestIntentSemantic: intent.semantic is off by default, on when set,
// and anything else is one error naming it.
func TestIntentSemantic(t *testing.T) {
	c, err := config.ParseConfig([]byte("intent:\n  classifier: on\n"))
	if err != nil || c.Intent.SemanticOn() {
		t.Fatalf("default: on %v, err %v; want off", c.Intent.SemanticOn(), err)
	}
	for yaml, on := range map[string]bool{"intent:\n  semantic: on\n": true, "intent:\n  semantic: off\n": false} {
		c, err := config.ParseConfig([]byte(yaml))
		if err != nil || c.Intent.SemanticOn() != on {
			t.Errorf("ParseConfig(%q): on %v, err %v; want on %v", yaml, c.Intent.SemanticOn(), err, on)
		}
	}
	if _, err := config.ParseConfig([]byte("intent:\n  semantic: yes\n")); err == nil || !strings.Contains(err.Error(), "intent.semantic") {
		t.Errorf("semantic: yes: %v, want an error naming intent.semantic", err)
	}
}

// TestEmbeddingModel: embedding_model defaults to the local embedder,
// "off" configures none, provider:model is taken as written, and anything
// else is one error naming the field.
func TestEmbeddingModel(t *testing.T) {
	for yaml, want := range map[string]string{
		"":                                   "local:ngram-512",
		"embedding_model: off\n":             "",
		"embedding_model: local:ngram-512\n": "local:ngram-512",
		"embedding_model: ollama:nomic-embed-text\n":       "ollama:nomic-embed-text",
		"embedding_model: openai:text-embedding-3-small\n": "openai:text-embedding-3-small",
	} {
		c, err := config.ParseConfig([]byte(yaml))
		if err != nil {
			t.Errorf("ParseConfig(%q): %v", yaml, err)
			continue
		}
		if got := c.EmbeddingRef(); got != want {
			t.Errorf("ParseConfig(%q).EmbeddingRef() = %q, want %q", yaml, got, want)
		}
	}
	for _, yaml := range []string{"embedding_model: nomodel\n", "embedding_model: \"Open AI:x\"\n", "embedding_model: \"openai:\"\n", "embedding_model: \"openai:a b\"\n"} {
		if _, err := config.ParseConfig([]byte(yaml)); err == nil || !strings.Contains(err.Error(), "embedding_model") {
			t.Errorf("ParseConfig(%q) = %v, want an error naming embedding_model", yaml, err)
		}
	}
}

func TestSchedulerBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    config.Scheduler
		ok   bool
	}{
		{"Defaults", config.Scheduler{}, true},
		{"Set", config.Scheduler{Workers: 8, Poll: config.Duration(time.Second), Lease: config.Duration(5 * time.Minute), RetryBusy: config.Duration(time.Minute)}, true},
		{"ManyWorkers", config.Scheduler{Workers: 65}, false},
		{"FastPoll", config.Scheduler{Poll: config.Duration(time.Millisecond)}, false},
		{"ShortLease", config.Scheduler{Lease: config.Duration(time.Second)}, false},
		{"LongRetry", config.Scheduler{RetryBusy: config.Duration(2 * time.Hour)}, false},
	} {
		if err := (config.Config{Scheduler: tc.s}).Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: validate = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
