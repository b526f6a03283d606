package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/anthropic"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestToolCacheSendsTheSameBytes: with the tool cache, every request
// body is byte for byte the one sent without it: the built-in tools'
// declarations, and definitions with what an encoder could change (HTML
// characters, a line separator, whitespace in a schema, keywords beside
// properties and required, no description, no schema).
func TestToolCacheSendsTheSameBytes(t *testing.T) {
	var defs []llm.ToolDef
	for _, tl := range builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir()}).Tools() {
		defs = append(defs, llm.ToolDef(tl.Declaration()))
	}
	defs = append(defs,
		llm.ToolDef{Name: "html", Description: "a <b> & c \u2028 \"q\" é", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"<&> \u003c \u2028"}},"required":["q"],"additionalProperties":false,"$defs":{"x":{"type":"string"}}}`)},
		llm.ToolDef{Name: "spaced", Parameters: json.RawMessage("{ \"type\" : \"object\" ,\n \"properties\": {} }")},
		llm.ToolDef{Name: "bare", Description: "No schema."},
	)
	req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: defs}
	newModel := func(t *testing.T, baseURL string, cached bool) llm.Model {
		cfg := anthropic.Config{APIKey: "k", BaseURL: baseURL, Model: "claude-test"}
		if cached {
			cfg.Tools = anthropic.NewToolCache(0)
		}
		m, err := anthropic.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	llmtest.SameBytesWithToolCache(t, llmtest.Anthropic{}, newModel, req)
	llmtest.SameChecksWithToolCache(t, newModel, append(req.Tools,
		llm.ToolDef{Name: "string_schema", Parameters: json.RawMessage(`{"type":"string"}`)},
		llm.ToolDef{Name: "bad.name", Parameters: json.RawMessage(`{"type":"object"}`)},
		llm.ToolDef{Name: "broken", Parameters: json.RawMessage(`{"type":`)}))
}
