package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/tool"
)

func fakeTools(t *testing.T, n int, tag string) []*tool.Tool {
	t.Helper()
	var out []*tool.Tool
	for i := range n {
		out = append(out, tool.NewRaw(tool.Spec{Name: fmt.Sprintf("t%d_%s", i, tag), Description: "does " + tag},
			&jsonschema.Schema{Type: "object"}, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil }))
	}
	return out
}

// TestIndexesBuildOncePerSetAndNeverCloseOneInUse: the same tools (even
// rebuilt, as MCP tools are per turn) share an index; a full cache makes
// room by its least recently used index not in use, and keeps none
// rather than closing one in use.
func TestIndexesBuildOncePerSetAndNeverCloseOneInUse(t *testing.T) {
	ctx := context.Background()
	c := newIndexes(2)
	a, releaseA, err := c.get(ctx, fakeTools(t, 3, "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if again, rel, _ := c.get(ctx, fakeTools(t, 3, "alpha")); again != a || c.builds != 1 {
		t.Fatalf("the same tools built another index (%d builds)", c.builds)
	} else {
		rel()
	}
	_, releaseB, _ := c.get(ctx, fakeTools(t, 3, "beta"))
	// Both kept indexes are in use: gamma's is not kept, and a still
	// answers.
	g, releaseG, _ := c.get(ctx, fakeTools(t, 3, "gamma"))
	if len(c.entries) != 2 {
		t.Fatalf("%d entries kept, want 2", len(c.entries))
	}
	if got, err := a.Search(ctx, "alpha", 5); err != nil || len(got) != 3 {
		t.Fatalf("an index in use after the cache filled: %v %v", got, err)
	}
	releaseG()
	if _, err := g.Search(ctx, "gamma", 5); err == nil {
		t.Errorf("an index kept by no one was not closed at its last release")
	}
	// a was used last but is released after b: b is the oldest free one
	// only once released; release b, then a newer set evicts it.
	releaseB()
	releaseA()
	releaseA() // a release runs once
	if _, rel, _ := c.get(ctx, fakeTools(t, 3, "alpha")); rel != nil {
		rel()
	}
	d, releaseD, _ := c.get(ctx, fakeTools(t, 3, "delta"))
	defer releaseD()
	if _, ok := c.entries[key(fakeTools(t, 3, "beta"))]; ok {
		t.Errorf("the least recently used index was kept")
	}
	if _, ok := c.entries[key(fakeTools(t, 3, "alpha"))]; !ok {
		t.Errorf("the most recently used free index was evicted")
	}
	if got, err := d.Search(ctx, "delta", 5); err != nil || len(got) != 3 {
		t.Errorf("the new index: %v %v", got, err)
	}
}
