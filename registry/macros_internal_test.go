package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/tool"
)

// walkMacrosAndFamilies is macrosAndFamilies as it was before the
// catalog kept its families and macro keys: a walk of every catalog
// tool. The reference of TestMacrosAndFamiliesMatchTheWalk.
func (c *Catalog) walkMacrosAndFamilies(in []*tool.Tool) (map[string]string, map[string]bool) {
	declared := make(map[string]bool, len(in))
	for _, t := range in {
		declared[t.Name()] = true
	}
	macros, families := map[string]string{}, map[string]bool{}
	for _, t := range c.tools {
		families[t.Family()] = families[t.Family()] || declared[t.Name()]
		for _, key := range t.Spec().Macros {
			if cur, ok := macros[key]; !ok || (!declared[cur] && declared[t.Name()]) {
				macros[key] = t.Name()
			}
		}
	}
	return macros, families
}

// TestMacrosAndFamiliesMatchTheWalk: for random subsets of a catalog
// whose tools share families and macro keys (and one without a family),
// the kept indexes give what a walk of the whole catalog gives.
func TestMacrosAndFamiliesMatchTheWalk(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object"}
	c := New()
	for i := range 40 {
		spec := tool.Spec{Name: fmt.Sprintf("t%02d", i), Family: fmt.Sprintf("f%d", i%5), Description: "Does it.",
			Macros: []string{fmt.Sprintf("m%d", i%7), fmt.Sprintf("m%d", i%3)}}
		if i == 13 {
			spec.Family = ""
		}
		c.Register(tool.NewRaw(spec, schema, func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil }))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var picked []int
		var in []*tool.Tool
		for i, tl := range c.tools {
			if r.IntN(4) == 0 || round == 0 {
				picked = append(picked, i)
				in = append(in, tl)
			}
		}
		if round == 1 {
			picked, in = nil, nil
		}
		gotM, gotF := c.macrosAndFamilies(picked)
		wantM, wantF := c.walkMacrosAndFamilies(in)
		if diff := cmp.Diff(wantM, gotM); diff != "" {
			t.Fatalf("round %d: macros (-walk +kept):\n%s", round, diff)
		}
		if diff := cmp.Diff(wantF, gotF); diff != "" {
			t.Fatalf("round %d: families (-walk +kept):\n%s", round, diff)
		}
	}
}
