package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// encodedSchema is what a request sends for params.
func encodedSchema(t *testing.T, params string) (string, error) {
	t.Helper()
	s, err := inputSchema(json.RawMessage(params))
	if err != nil {
		return "", err
	}
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatalf("marshal %s: %v", params, err)
	}
	return string(b), nil
}

// TestInputSchemaKeepsDeclaredOrder: properties, required and type lead,
// as the SDK lays them out; every other keyword follows in the declared
// order, the same bytes on every call (the SDK's own encoding of extra
// keywords followed a map's random order).
func TestInputSchemaKeepsDeclaredOrder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false,"$defs":{"x":{"type":"string"}},"title":"T","zeta":1,"alpha":2}`,
			`{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object","additionalProperties":false,"$defs":{"x":{"type":"string"}},"title":"T","zeta":1,"alpha":2}`},
		{`{"properties": {"q": {"type": "string", "description": "<b>"}}}`, `{"properties":{"q":{"type":"string","description":"\u003cb\u003e"}},"type":"object"}`},
		{`{}`, `{"type":"object"}`},
		{`{"required":null,"a":1,"a":2}`, `{"type":"object","a":2}`},
	} {
		for range 20 {
			got, err := encodedSchema(t, tc.in)
			if err != nil {
				t.Fatalf("%s: %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("%s\nsent %s\nwant %s", tc.in, got, tc.want)
			}
		}
	}
	for _, bad := range []string{`[]`, `null`, `{"type":"string"}`, `{"required":"q"}`, `{"a":1} {}`, `{"a":`} {
		if got, err := encodedSchema(t, bad); err == nil {
			t.Errorf("%s accepted as %s", bad, got)
		}
	}
}

// FuzzInputSchema: whatever the schema, inputSchema refuses it or sends
// an object with the same keywords and values (type "object" added), the
// same bytes every time.
func FuzzInputSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false,"$defs":{}}`)
	f.Add(`{"a":1,"a":[2],"b":{"<":"&"}}`)
	f.Fuzz(func(t *testing.T, params string) {
		got, err := encodedSchema(t, params)
		if err != nil {
			return
		}
		again, _ := encodedSchema(t, params)
		if again != got {
			t.Fatalf("%q sent as %s, then %s", params, got, again)
		}
		if params == "" {
			// No parameters: a tool without arguments.
			if got != `{"type":"object"}` {
				t.Fatalf("no parameters sent as %s", got)
			}
			return
		}
		var in, out map[string]any
		if err := json.Unmarshal([]byte(params), &in); err != nil {
			t.Fatalf("%q accepted but not an object: %v", params, err)
		}
		if err := json.Unmarshal([]byte(got), &out); err != nil {
			t.Fatalf("%q sent as invalid JSON %s", params, got)
		}
		in["type"] = "object"
		if req, ok := in["required"]; ok && req == nil {
			delete(in, "required")
		}
		if diff := cmp.Diff(in, out); diff != "" {
			t.Fatalf("%q sent as %s (-declared +sent):\n%s", params, got, diff)
		}
	})
}
