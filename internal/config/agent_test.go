package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/turn"
)

// manyModels is n distinct model references, comma-separated.
func manyModels(n int) string {
	refs := make([]string, n)
	for i := range refs {
		refs[i] = fmt.Sprintf("p:m%d", i)
	}
	return strings.Join(refs, ", ")
}

func TestParseAgent(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    config.Agent
		wantErr string
	}{
		{
			name: "full",
			yaml: "name: helper\nmodel: ollama:qwen3:8b\nprompt: Hi.\ntools: [web_search, memory]\nswitches: {memory: true}\n",
			want: config.Agent{Name: "helper", Model: "ollama:qwen3:8b", Prompt: "Hi.", Tools: []string{"web_search", "memory"}, Switches: map[string]bool{"memory": true}},
		},
		{name: "default model", yaml: "name: a\n", want: config.Agent{Name: "a", Model: config.DefaultModel}},
		{name: "empty", yaml: "", wantErr: "empty agent definition"},
		{name: "unknown key", yaml: "name: a\ntool: [x]\n", wantErr: `line 2: unknown key "tool"`},
		{name: "bad name", yaml: "name: A B\n", wantErr: `name "A B"`},
		{name: "missing name", yaml: "model: openai:x\n", wantErr: `name ""`},
		{name: "bad model", yaml: "name: a\nmodel: gpt-4\n", wantErr: "write it as provider:model"},
		{name: "model without name", yaml: "name: a\nmodel: 'openai:'\n", wantErr: "write it as provider:model"},
		{name: "bad allowlist entry", yaml: "name: a\ntools: ['web search']\n", wantErr: `tools[0] "web search"`},
		{name: "bad switch", yaml: "name: a\nswitches: {'Memory!': true}\n", wantErr: `switches: "Memory!"`},
		{name: "not yaml", yaml: "name: [\n", wantErr: "invalid YAML"},
		{name: "wrong type", yaml: "name: a\ntools: web\n", wantErr: "line 2"},
		{
			name: "deliberate override",
			yaml: "name: a\ndeliberate_tool_mode: {enabled: false, history_turns: 0}\n",
			want: config.Agent{Name: "a", Model: config.DefaultModel, Deliberate: &config.Deliberate{Enabled: ptr(false), HistoryTurns: ptr(0)}},
		},
		{name: "deliberate history too long", yaml: "name: a\ndeliberate_tool_mode: {history_turns: 11}\n", wantErr: "history_turns: 11 is outside 0–10"},
		{name: "deliberate negative history", yaml: "name: a\ndeliberate_tool_mode: {history_turns: -1}\n", wantErr: "history_turns: -1"},
		{name: "deliberate unknown key", yaml: "name: a\ndeliberate_tool_mode: {mode: on}\n", wantErr: `unknown key "mode"`},
		{
			name: "models",
			yaml: "name: a\nmodel: openai:gpt-4.1\nmodels: [ollama:qwen3:8b, anthropic:claude-sonnet-4-5]\n",
			want: config.Agent{Name: "a", Model: "openai:gpt-4.1", Models: []string{"ollama:qwen3:8b", "anthropic:claude-sonnet-4-5"}},
		},
		{name: "models bad ref", yaml: "name: a\nmodels: [gpt-4]\n", wantErr: `models[0]: model "gpt-4"`},
		{name: "models repeat", yaml: "name: a\nmodels: [x:a, x:a]\n", wantErr: `models[1] "x:a": listed twice`},
		{name: "models own model", yaml: "name: a\nmodel: x:a\nmodels: [x:a]\n", wantErr: `models[0] "x:a": listed twice`},
		{name: "models too many", yaml: "name: a\nmodels: [" + manyModels(config.MaxAgentModels+1) + "]\n", wantErr: "models: 21 entries, at most 20"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.ParseAgent([]byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurnModel(t *testing.T) {
	no := false
	tests := []struct {
		name     string
		agent    config.Agent
		override string
		want     turn.Model
	}{
		{"tools default on", config.Agent{Model: "openai:gpt-4.1-mini"}, "", turn.Model{Provider: "openai", Name: "gpt-4.1-mini", Caps: turn.Capabilities{Tools: true}}},
		{"override", config.Agent{Model: "openai:x"}, "anthropic:claude-sonnet-4-5", turn.Model{Provider: "anthropic", Name: "claude-sonnet-4-5", Caps: turn.Capabilities{Tools: true}}},
		{"capabilities", config.Agent{Model: "gemini:g", Capabilities: &config.Capabilities{Tools: &no, Vision: true}}, "", turn.Model{Provider: "gemini", Name: "g", Caps: turn.Capabilities{Vision: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.agent.TurnModel(tc.override)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadAgentExample(t *testing.T) {
	a, err := config.LoadAgent("../../examples/agents/assistant.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "assistant" || a.Prompt == "" || len(a.Tools) != 0 {
		t.Errorf("example agent: %+v", a)
	}
}

func TestLoadAgentTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("name: a\nprompt: "+strings.Repeat("x", config.MaxAgentFileBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.LoadAgent(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

func FuzzParseAgent(f *testing.F) {
	for _, s := range []string{"name: a\n", "name: a\nmodel: ollama:q:8b\ntools: [x]\n", "name: [\n", "&a [*a]", "name: a\nswitches: {m: true}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := config.ParseAgent(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if a.Validate() != nil {
			t.Fatalf("accepted agent does not validate: %+v", a)
		}
	})
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"empty", "", ""},
		{"full", "providers:\n  openai: {api_key_env: OPENAI_API_KEY}\n  lmstudio: {base_url: 'http://127.0.0.1:1234/v1'}\nprices:\n  'openai:gpt-4.1-mini': {input: 0.4, output: 1.6}\nmax_steps: 20\ntext_tools: ['lmstudio:tiny']\n", ""},
		{"unknown key", "max_step: 3\n", `unknown key "max_step"`},
		{"key and env", "providers:\n  openai: {api_key: x, api_key_env: Y}\n", "not both"},
		{"bad provider name", "providers:\n  'Open AI': {}\n", "not a provider name"},
		{"bad price ref", "prices:\n  gpt4: {input: 1}\n", "provider:model"},
		{"negative price", "prices:\n  'a:b': {input: -1}\n", "cannot be negative"},
		{"max steps", "max_steps: 5000\n", "use 1–1000"},
		{"tool call limits", "tool_calls: {per_step: 8, per_turn: 40, concurrent: 2}\nstored_results: {conversation_bytes: 16777216, user_bytes: 67108864}\n", ""},
		{"per_step too high", "tool_calls: {per_step: 5000}\n", "tool_calls.per_step 5000: use 1–1000"},
		{"negative per_turn", "tool_calls: {per_turn: -1}\n", "tool_calls.per_turn -1"},
		{"concurrent too high", "tool_calls: {concurrent: 1000}\n", "tool_calls.concurrent 1000"},
		{"per_turn below per_step", "tool_calls: {per_step: 10, per_turn: 5}\n", "below per_step"},
		{"per_turn below the default per_step", "tool_calls: {per_turn: 8}\n", "below per_step 16"},
		{"stored results too small", "stored_results: {conversation_bytes: 1000}\n", "stored_results.conversation_bytes 1000"},
		{"negative user quota", "stored_results: {user_bytes: -1}\n", "stored_results.user_bytes -1"},
		{"user quota below conversation", "stored_results: {conversation_bytes: 67108864, user_bytes: 16777216}\n", "below conversation_bytes"},
		{"user quota below the default conversation quota", "stored_results: {user_bytes: 16777216}\n", "below conversation_bytes 67108864"},
		{"bad text_tools", "text_tools: [nope]\n", "text_tools[0]"},
		{"bad network mode", "network: {mode: open}\n", "use public or self-hosted"},
		{"crawl4ai needs self-hosted", "web: {crawl4ai_url: 'http://127.0.0.1:11235'}\n", "needs network.mode self-hosted"},
		{"crawl4ai self-hosted", "network: {mode: self-hosted}\nweb: {crawl4ai_url: 'http://127.0.0.1:11235'}\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.ParseConfig([]byte(tc.yaml))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if _, err := config.LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "config file") {
		t.Errorf("missing file: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestTurnAgentDeliberate checks the override reaches the turn's facts as
// copies: a field left out stays nil (the organisation's applies).
func TestTurnAgentDeliberate(t *testing.T) {
	a, err := config.ParseAgent([]byte("name: a\ndeliberate_tool_mode: {enabled: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := a.TurnAgent().Deliberate
	if d.Enabled == nil || !*d.Enabled || d.HistoryTurns != nil {
		t.Fatalf("deliberate = %+v", d)
	}
	*d.Enabled = false
	if !*a.Deliberate.Enabled {
		t.Fatal("the turn's override aliases the definition")
	}
	if d := (config.Agent{Name: "b"}).TurnAgent().Deliberate; d.Enabled != nil || d.HistoryTurns != nil {
		t.Fatalf("no override = %+v", d)
	}
}
