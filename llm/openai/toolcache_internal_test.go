package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
	"github.com/quiverhq/quiver/turn"
)

// TestDeclaredReusesTheCache: models sharing a tool cache build a list
// of definitions once (equal definitions from another slice included),
// each declaration carried as its encoded bytes; parameters that are not
// JSON are refused before sending, and not kept.
func TestDeclaredReusesTheCache(t *testing.T) {
	cache := NewToolCache(0)
	open := func() *Model {
		m, err := New(Config{Model: "gpt-test", Caps: turn.Capabilities{Tools: true}, Tools: cache})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	defs := []llm.ToolDef{llmtest.SampleTool()}
	a, err := open().declared(defs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := open().declared([]llm.ToolDef{llmtest.SampleTool()})
	if err != nil {
		t.Fatal(err)
	}
	if &a[0] != &b[0] {
		t.Error("the second model built the declarations again")
	}
	if a[0].OfFunction != nil {
		t.Error("a cached declaration is the SDK's value, not its encoded bytes")
	}
	bad := []llm.ToolDef{{Name: "x", Parameters: json.RawMessage(`{"type":`)}}
	for range 2 {
		_, err := llm.Collect(open().Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "x"}}, Tools: bad}), nil)
		if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrBadRequest {
			t.Errorf("err = %v, want ErrBadRequest before sending", err)
		}
	}
	if cache.Len() != 1 {
		t.Errorf("%d lists kept, want the one good list", cache.Len())
	}
}
