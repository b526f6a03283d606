package gemini

import (
	"testing"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

// TestToolCacheReuses: requests with equal definitions share one built
// declaration list; a refused schema is refused from the cache too, and
// not kept.
func TestToolCacheReuses(t *testing.T) {
	c := NewToolCache(0)
	req := llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.ToolDef{llmtest.SampleTool()}}
	_, a, err := buildRequest(req, c)
	if err != nil {
		t.Fatal(err)
	}
	req.Tools = []llm.ToolDef{llmtest.SampleTool()}
	_, b, err := buildRequest(req, c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Tools[0] != b.Tools[0] {
		t.Error("the second request built the declarations again")
	}
	bad := llm.ToolDef{Name: "x", Parameters: []byte(`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`)}
	req.Tools = []llm.ToolDef{bad}
	_, _, errPlain := buildRequest(req, nil)
	_, _, errCached := buildRequest(req, c)
	if (errPlain == nil) != (errCached == nil) || c.Len() != 1 {
		t.Errorf("refusal without the cache %v, with it %v; %d lists kept", errPlain, errCached, c.Len())
	}
}
