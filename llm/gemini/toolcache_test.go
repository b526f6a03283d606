package gemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quiverhq/quiver/builtin"
	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/gemini"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestToolCacheSendsTheSameBytes: with the tool cache, every request
// body is byte for byte the one sent without it, for the built-in tools'
// declarations and a definition with HTML characters and a line
// separator.
func TestToolCacheSendsTheSameBytes(t *testing.T) {
	var defs []llm.ToolDef
	for _, tl := range builtin.NewCatalog(builtin.CatalogDeps{DataDir: t.TempDir()}).Tools() {
		defs = append(defs, llm.ToolDef(tl.Declaration()))
	}
	defs = append(defs, llm.ToolDef{Name: "html", Description: "a <b> & c \u2028 é",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"<&> \u2028"}},"required":["q"]}`)})
	req := llm.Request{System: "Be brief.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: defs}
	newModel := func(t *testing.T, baseURL string, cached bool) llm.Model {
		cfg := gemini.Config{APIKey: "k", BaseURL: baseURL, Model: "gemini-test"}
		if cached {
			cfg.Tools = gemini.NewToolCache(0)
		}
		m, err := gemini.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	llmtest.SameBytesWithToolCache(t, llmtest.Gemini{}, newModel, req)
	llmtest.SameChecksWithToolCache(t, newModel, append(req.Tools,
		llm.ToolDef{Name: "string_schema", Parameters: json.RawMessage(`{"type":"string"}`)},
		llm.ToolDef{Name: "bad.name", Parameters: json.RawMessage(`{"type":"object"}`)},
		llm.ToolDef{Name: "broken", Parameters: json.RawMessage(`{"type":`)}))
}
