package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/llm/openai"
	"github.com/quiverhq/quiver/turn"
)

// cacheDefs are the built-in tools' declarations, as a turn sends them,
// and definitions with what an encoder could change: HTML characters and
// a line separator in a description and a schema, whitespace in a schema,
// no description, no schema.
func cacheDefs(t *testing.T) []llm.ToolDef {
	t.Helper()
	var defs []llm.ToolDef
	for _, tl := range builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir()}).Tools() {
		defs = append(defs, llm.ToolDef(tl.Declaration()))
	}
	if len(defs) < 10 {
		t.Fatalf("%d built-in tools", len(defs))
	}
	return append(defs,
		llm.ToolDef{Name: "html", Description: "a <b> & c \u2028 \"q\" é", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"<&> \u003c \u2028"}}}`)},
		llm.ToolDef{Name: "spaced", Parameters: json.RawMessage("{ \"type\" : \"object\" ,\n \"properties\": {} }")},
		llm.ToolDef{Name: "bare", Description: "No schema."},
	)
}

// TestToolCacheSendsTheSameBytes: with the tool cache, every request
// body is byte for byte the one sent without it.
func TestToolCacheSendsTheSameBytes(t *testing.T) {
	req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: cacheDefs(t), CacheKey: "agent-a"}
	newModel := func(t *testing.T, baseURL string, cached bool) llm.Model {
		cfg := openai.Config{APIKey: "k", BaseURL: baseURL + "/v1", Model: "gpt-test", Caps: turn.Capabilities{Tools: true}}
		if cached {
			cfg.Tools = openai.NewToolCache(0)
		}
		m, err := openai.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	llmtest.SameBytesWithToolCache(t, llmtest.OpenAI{}, newModel, req)
	llmtest.SameChecksWithToolCache(t, newModel, append(req.Tools,
		llm.ToolDef{Name: "string_schema", Parameters: json.RawMessage(`{"type":"string"}`)},
		llm.ToolDef{Name: "bad.name", Parameters: json.RawMessage(`{"type":"object"}`)},
		llm.ToolDef{Name: "broken", Parameters: json.RawMessage(`{"type":`)}))
}
