package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/quiverhq/quiver/tool"
)

// importJSON imports a tool whose input schema is the JSON text src.
func importJSON(t *testing.T, src string) (*tool.Tool, error) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return tool.Import(tool.Spec{Name: "srv__deep", Description: "A server's tool."}, &s,
		func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) {
			return tool.Result{Content: "ok"}, nil
		})
}

// fanOut is a schema of n $defs, each referring to the next one twice
// (through key, e.g. allOf or properties): 2^n subschemas once the
// references are followed, in a few kilobytes.
func fanOut(n int, twice func(next string) string) string {
	defs := make([]string, n+1)
	for i := range n {
		defs[i] = fmt.Sprintf("%q: %s", fmt.Sprintf("d%d", i), twice(fmt.Sprintf("#/$defs/d%d", i+1)))
	}
	defs[n] = fmt.Sprintf(`"d%d": {"type": "string"}`, n)
	return `{"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": {` + strings.Join(defs, ", ") + `}}`
}

// TestImportRefusesExpandingSchemas: a schema that stands for
// exponentially many subschemas, or loops through references without
// reaching a property, is refused when imported, with one error naming
// the tool; one that shares definitions within bounds, or recurses
// through a property, is not.
func TestImportRefusesExpandingSchemas(t *testing.T) {
	tests := []struct {
		name, schema, wantErr string
	}{
		{"allOf fan-out", fanOut(30, func(next string) string {
			return fmt.Sprintf(`{"allOf": [{"$ref": %q}, {"$ref": %q}]}`, next, next)
		}), "tool srv__deep: input schema stands for more than 10000 subschemas once its $ref references are followed"},
		{"properties fan-out", fanOut(30, func(next string) string {
			return fmt.Sprintf(`{"type": "object", "properties": {"l": {"$ref": %q}, "r": {"$ref": %q}}}`, next, next)
		}), "tool srv__deep: input schema stands for more than 10000 subschemas once its $ref references are followed"},
		{"ref loop", `{"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"anyOf": [{"$ref": "#/$defs/y"}]}, "y": {"$ref": "#/$defs/x"}}}`,
			"tool srv__deep: input schema has a $ref loop that never reaches a property or item"},
		{"remote ref", `{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}`,
			`tool srv__deep: input schema: $ref "https://example.com/s.json": only references into the schema itself (#...) are supported`},
		{"missing target", `{"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}}`,
			`tool srv__deep: input schema: $ref "#/$defs/nope": it points at no schema`},
		{"shared within bounds", fanOut(10, func(next string) string {
			return fmt.Sprintf(`{"allOf": [{"$ref": %q}, {"$ref": %q}]}`, next, next)
		}), ""},
		{"recursive tree", `{"type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}, "$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}`, ""},
		{"anchor and root refs", `{"type": "object", "properties": {"self": {"$ref": "#"}, "n": {"$ref": "#num"}}, "$defs": {"n": {"$anchor": "num", "type": "number"}}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := importJSON(t, tc.schema)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("import error %q, want %q", got, tc.wantErr)
			}
		})
	}
}

// twoWays is a recursive schema in which a nested object is reached
// through two branches at every level: validating an object nested n
// deep visits 2^n subschemas.
const twoWays = `{"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "object",
	"allOf": [{"properties": {"x": {"$ref": "#/$defs/n"}}}, {"properties": {"x": {"$ref": "#/$defs/n"}}}]}}}`

// nest is {"x": {"x": ... {} ...}}, depth objects deep.
func nest(depth int) string {
	return strings.Repeat(`{"x": `, depth) + "{}" + strings.Repeat("}", depth)
}

// TestValidationWorkBounded: arguments whose validation against a
// recursive schema would take more than MaxValidationSteps steps are
// refused before validation runs, with few allocations (validating them
// would allocate for each of its 2^22 steps); shallower ones validate.
func TestValidationWorkBounded(t *testing.T) {
	tl, err := importJSON(t, twoWays)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Validate(json.RawMessage(nest(8))); err != nil {
		t.Fatalf("shallow arguments: %v", err)
	}
	deep := json.RawMessage(nest(22))
	var ae *tool.ArgError
	_, err = tl.Validate(deep)
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "too deeply nested") {
		t.Fatalf("deep arguments: error %v, want an *ArgError saying they are too deeply nested", err)
	}
	allocs := testing.AllocsPerRun(1, func() { _, _ = tl.Validate(deep) })
	if allocs > 1000 {
		t.Errorf("refusing the arguments took %.0f allocations, want at most 1000", allocs)
	}
}

// TestDefaultWorkBounded: a default whose validation (done at import)
// would take more than MaxValidationSteps steps is refused at import.
func TestDefaultWorkBounded(t *testing.T) {
	schema := strings.Replace(twoWays, `"properties": {"x": {"$ref": "#/$defs/n"}}, "$defs"`,
		`"properties": {"x": {"$ref": "#/$defs/n", "default": `+nest(22)+`}}, "$defs"`, 1)
	_, err := importJSON(t, schema)
	want := "tool srv__deep: input schema has a default too deeply nested to check (more than 262144 steps)"
	if err == nil || err.Error() != want {
		t.Fatalf("import error %v, want %q", err, want)
	}
}

// FuzzImportSchema: whatever schema a server lists, Import returns (a
// tool or an error) and an imported tool's validation of small
// arguments returns: neither panics nor runs unbounded.
func FuzzImportSchema(f *testing.F) {
	f.Add(twoWays, nest(3))
	f.Add(fanOut(3, func(next string) string {
		return fmt.Sprintf(`{"allOf": [{"$ref": %q}, {"$ref": %q}]}`, next, next)
	}), `{"a": "x"}`)
	f.Add(`{"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}}`, `{"a": 1}`)
	f.Add(`{"type": "object", "properties": {"self": {"$ref": "#"}}, "$defs": {"n": {"$anchor": "n"}}}`, `{"self": {"self": {}}}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		var s jsonschema.Schema
		if len(schema) > 4096 || json.Unmarshal([]byte(schema), &s) != nil || s.Type != "object" {
			return
		}
		tl, err := tool.Import(tool.Spec{Name: "srv__fuzz", Description: "Fuzzed."}, &s,
			func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil })
		if err != nil || len(args) > 512 {
			return
		}
		_, _ = tl.Validate(json.RawMessage(args))
	})
}

// BenchmarkImport is the import of a listed tool of an ordinary shape
// (five properties, one of them an array of a $defs object), which an
// MCP server's tools go through on every turn's routing.
func BenchmarkImport(b *testing.B) {
	const src = `{"type": "object", "required": ["q"], "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 5},
		"tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}}, "lang": {"enum": ["en", "vi"]}, "deep": {"type": "boolean"}},
		"$defs": {"tag": {"type": "object", "properties": {"name": {"type": "string"}, "weight": {"type": "number"}}}}}`
	var proto jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &proto); err != nil {
		b.Fatal(err)
	}
	h := func(context.Context, tool.Scope, json.RawMessage) (tool.Result, error) { return tool.Result{}, nil }
	for b.Loop() {
		if _, err := tool.Import(tool.Spec{Name: "srv__search", Description: "Search."}, proto.CloneSchemas(), h); err != nil {
			b.Fatal(err)
		}
	}
}
