package anthropic

import (
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestDeclaredReusesTheCache: models sharing a tool cache build a list
// of definitions once, each declaration carried as its encoded bytes.
func TestDeclaredReusesTheCache(t *testing.T) {
	cache := NewToolCache(0)
	open := func() *Model {
		m, err := New(Config{APIKey: "k", Model: "claude-test", Tools: cache})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	two := func() []llm.ToolDef { d := llmtest.SampleTool(); e := d; e.Name = "other"; return []llm.ToolDef{d, e} }
	a, err := open().declared(two())
	if err != nil {
		t.Fatal(err)
	}
	b, err := open().declared(two())
	if err != nil {
		t.Fatal(err)
	}
	if &a[0] != &b[0] {
		t.Error("the second model built the declarations again")
	}
	for i, u := range a {
		if u.OfTool != nil {
			t.Errorf("declaration %d is the SDK's value, not its encoded bytes", i)
		}
	}
}
