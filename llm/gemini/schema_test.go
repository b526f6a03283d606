package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/quiverhq/quiver/llm"
	"github.com/quiverhq/quiver/llm/llmtest"
)

func TestTranslateParams(t *testing.T) {
	str := &genai.Schema{Type: genai.TypeString}
	tests := []struct {
		name   string
		schema string
		want   *genai.Schema
	}{
		{"no parameters", ``, nil},
		{"null", `null`, nil},
		{"empty schema", `{}`, nil},
		{"object without properties", `{"type":"object","additionalProperties":false}`, nil},
		{"empty properties", `{"type":"object","properties":{}}`, nil},
		{
			"sample tool",
			string(llmtest.SampleTool().Parameters),
			&genai.Schema{Type: genai.TypeObject, Required: []string{"path"}, Properties: map[string]*genai.Schema{
				"path":  {Type: genai.TypeString, Description: "file path"},
				"limit": {Type: genai.TypeInteger},
				"tags":  {Type: genai.TypeArray, Items: str},
			}},
		},
		{
			"type inferred from properties",
			`{"properties":{"a":{"type":"string"}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": str}},
		},
		{
			"every translated keyword",
			`{"type":"object","title":"T","description":"D","minProperties":1,"maxProperties":3,"properties":{
				"s":{"type":"string","enum":["a","b"],"format":"enum","pattern":"^[ab]$","minLength":1,"maxLength":1.0},
				"n":{"type":"number","format":"double","minimum":-1.5,"maximum":2e3},
				"i":{"type":"integer","format":"int64","minimum":0},
				"b":{"type":"boolean","nullable":true},
				"l":{"type":"array","items":{"type":"string","format":"date-time"},"minItems":1,"maxItems":5}},
				"required":["s","s","n"]}`,
			&genai.Schema{
				Type: genai.TypeObject, Title: "T", Description: "D",
				MinProperties: genai.Ptr[int64](1), MaxProperties: genai.Ptr[int64](3),
				Required: []string{"s", "n"},
				Properties: map[string]*genai.Schema{
					"s": {Type: genai.TypeString, Enum: []string{"a", "b"}, Format: "enum", Pattern: "^[ab]$", MinLength: genai.Ptr[int64](1), MaxLength: genai.Ptr[int64](1)},
					"n": {Type: genai.TypeNumber, Format: "double", Minimum: genai.Ptr(-1.5), Maximum: genai.Ptr(2000.0)},
					"i": {Type: genai.TypeInteger, Format: "int64", Minimum: genai.Ptr(0.0)},
					"b": {Type: genai.TypeBoolean, Nullable: genai.Ptr(true)},
					"l": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString, Format: "date-time"}, MinItems: genai.Ptr[int64](1), MaxItems: genai.Ptr[int64](5)},
				},
			},
		},
		{
			"type list with null is nullable",
			`{"type":"object","properties":{"a":{"type":["null","string"]}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeString, Nullable: genai.Ptr(true)}}},
		},
		{
			"const and untyped enum become string enums",
			`{"type":"object","properties":{"a":{"const":"x"},"b":{"enum":["p","q"]}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
				"a": {Type: genai.TypeString, Enum: []string{"x"}},
				"b": {Type: genai.TypeString, Enum: []string{"p", "q"}},
			}},
		},
		{
			"harmless keywords dropped",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","type":"object","additionalProperties":false,"unevaluatedProperties":false,
				"properties":{"u":{"type":"string","format":"uri","default":"a","examples":["b"],"x-internal":1,"deprecated":true},
				"n":{"type":"integer","exclusiveMinimum":0,"multipleOf":2},
				"l":{"type":"array","items":{"type":"integer","format":"uint8"},"uniqueItems":true},
				"o":{"type":"object","additionalProperties":{},"properties":{"k":{"type":"string"}}}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
				"u": str,
				"n": {Type: genai.TypeInteger},
				"l": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger}},
				"o": {Type: genai.TypeObject, Properties: map[string]*genai.Schema{"k": str}},
			}},
		},
		{
			"keywords of other types are ignored",
			`{"type":"object","properties":{"s":{"type":"string","minimum":3,"items":{"type":"string"},"properties":{"x":{}}}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"s": str}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := translateParams(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("translateParams: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckToolRefuses(t *testing.T) {
	tests := []struct {
		name, schema string
		// want are substrings of the message: the keyword and its path.
		want []string
	}{
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}}}`, []string{`"$ref"`, "#/properties/a"}},
		{"defs", `{"type":"object","$defs":{"a":{"type":"string"}},"properties":{"a":{"type":"string"}}}`, []string{`"$defs"`, "at #:"}},
		{"oneOf", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`, []string{`"oneOf"`, "#/properties/a"}},
		{"anyOf in items", `{"type":"object","properties":{"l":{"type":"array","items":{"anyOf":[{"type":"string"}]}}}}`, []string{`"anyOf"`, "#/properties/l/items"}},
		{"allOf", `{"allOf":[{"type":"object"}]}`, []string{`"allOf"`, "at #:"}},
		{"not", `{"type":"object","properties":{"a":{"type":"string","not":{"const":"x"}}}}`, []string{`"not"`, "#/properties/a"}},
		{"patternProperties", `{"type":"object","properties":{"m":{"type":"object","patternProperties":{"^x":{"type":"string"}}}}}`, []string{`"patternProperties"`, "#/properties/m"}},
		{"map values", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`, []string{`"additionalProperties"`, "#/properties/m"}},
		{"integer enum", `{"type":"object","properties":{"n":{"type":"integer","enum":[1,2]}}}`, []string{`"enum"`, "#/properties/n"}},
		{"mixed enum", `{"type":"object","properties":{"n":{"enum":["a",1]}}}`, []string{`"enum"`, "#/properties/n"}},
		{"number const", `{"type":"object","properties":{"n":{"const":3}}}`, []string{`"const"`, "#/properties/n"}},
		{"tuple items", `{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}`, []string{`"items"`, "#/properties/t"}},
		{"prefixItems", `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"string"}}}}`, []string{`"prefixItems"`, "#/properties/t"}},
		{"array without items", `{"type":"object","properties":{"t":{"type":"array"}}}`, []string{`"items"`, "#/properties/t"}},
		{"string root", `{"type":"string"}`, []string{`"type"`, "at #:"}},
		{"array root", `{"type":"array","items":{"type":"string"}}`, []string{`"type"`, "at #:"}},
		{"nullable root", `{"type":["object","null"],"properties":{"a":{"type":"string"}}}`, []string{`"type"`, "at #:"}},
		{"boolean root", `true`, []string{`"type"`, "at #:"}},
		{"two types", `{"type":"object","properties":{"a":{"type":["string","integer"]}}}`, []string{`"type"`, "#/properties/a"}},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"date"}}}`, []string{`"type"`, "#/properties/a"}},
		{"no type", `{"type":"object","properties":{"a":{"description":"anything"}}}`, []string{`"type"`, "#/properties/a"}},
		{"nested empty object", `{"type":"object","properties":{"o":{"type":"object"}}}`, []string{`"properties"`, "#/properties/o"}},
		{"required undeclared", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, []string{`"required"`, `"b"`}},
		{"unknown keyword", `{"type":"object","properties":{"a":{"type":"string","minLenght":2}}}`, []string{`"minLenght"`, "#/properties/a"}},
		{"escaped path", `{"type":"object","properties":{"a/b~c":{"type":"string","if":{}}}}`, []string{`"if"`, "#/properties/a~1b~0c"}},
		{"negative count", `{"type":"object","properties":{"a":{"type":"string","maxLength":-1}}}`, []string{`"maxLength"`, "#/properties/a"}},
		{"fractional count", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"minItems":1.5}}}`, []string{`"minItems"`, "#/properties/a"}},
		{"huge count", `{"type":"object","properties":{"a":{"type":"string","maxLength":1e300}}}`, []string{`"maxLength"`, "#/properties/a"}},
		{"string minimum", `{"type":"object","properties":{"a":{"type":"number","minimum":"0"}}}`, []string{`"minimum"`, "#/properties/a"}},
		{"description not a string", `{"type":"object","properties":{"a":{"type":"string","description":1}}}`, []string{`"description"`, "#/properties/a"}},
		{"invalid JSON", `{"type":`, []string{"not valid JSON"}},
		{"trailing JSON", `{} {}`, []string{"more JSON"}},
	}
	m := newTestModel(t, "http://127.0.0.1:1")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.CheckTool(llm.ToolDef{Name: "probe", Parameters: json.RawMessage(tc.schema)})
			e, ok := llm.AsError(err)
			if !ok || e.Kind != llm.ErrUnsupportedTool {
				t.Fatalf("CheckTool = %v, want an ErrUnsupportedTool", err)
			}
			for _, w := range append(tc.want, `tool "probe"`) {
				if !strings.Contains(e.Msg, w) {
					t.Errorf("message %q does not name %s", e.Msg, w)
				}
			}
		})
	}
}

func TestCheckToolName(t *testing.T) {
	m := newTestModel(t, "http://127.0.0.1:1")
	for _, name := range []string{"read_file", "_x", "ns.tool:v1-2", strings.Repeat("a", 64)} {
		if err := m.CheckTool(llm.ToolDef{Name: name}); err != nil {
			t.Errorf("CheckTool(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "1tool", "has space", "ünï", strings.Repeat("a", 65)} {
		if e, ok := llm.AsError(m.CheckTool(llm.ToolDef{Name: name})); !ok || e.Kind != llm.ErrUnsupportedTool {
			t.Errorf("CheckTool(%q) accepted", name)
		}
	}
}

// FuzzTranslateParams holds the translator to its contract: no panic, a
// refusal is an ErrUnsupportedTool, and what CheckTool accepts translates
// into a schema the Gemini API takes.
func FuzzTranslateParams(f *testing.F) {
	f.Add([]byte(llmtest.SampleTool().Parameters))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["string","null"],"enum":["x"]},"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":"number","minimum":1}},"required":["c"]}}}}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}]}}}`))
	f.Add([]byte(`{"properties":{"a":{"const":"x"}},"additionalProperties":false}`))
	f.Add([]byte(`{}`))
	m := newTestModel(f, "http://127.0.0.1:1")
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := llm.ToolDef{Name: "fuzz", Parameters: raw}
		if err := m.CheckTool(d); err != nil {
			if e, ok := llm.AsError(err); !ok || e.Kind != llm.ErrUnsupportedTool {
				t.Fatalf("refusal %v is not an ErrUnsupportedTool", err)
			}
			return
		}
		fd, err := declaration(d)
		if err != nil {
			t.Fatalf("CheckTool accepted what declaration refuses: %v", err)
		}
		if fd.Parameters != nil {
			if fd.Parameters.Type != genai.TypeObject {
				t.Fatalf("root type %s", fd.Parameters.Type)
			}
			checkGeminiSchema(t, "#", fd.Parameters)
		}
		if _, err := json.Marshal(fd); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

// checkGeminiSchema asserts the shapes the Gemini API is known to reject
// do not occur.
func checkGeminiSchema(t *testing.T, path string, s *genai.Schema) {
	t.Helper()
	switch s.Type {
	case genai.TypeObject:
		if len(s.Properties) == 0 {
			t.Fatalf("%s: object without properties", path)
		}
		for _, r := range s.Required {
			if s.Properties[r] == nil {
				t.Fatalf("%s: required %q undeclared", path, r)
			}
		}
		for name, p := range s.Properties {
			checkGeminiSchema(t, path+"/properties/"+name, p)
		}
	case genai.TypeArray:
		if s.Items == nil {
			t.Fatalf("%s: array without items", path)
		}
		checkGeminiSchema(t, path+"/items", s.Items)
	case genai.TypeString, genai.TypeNumber, genai.TypeInteger, genai.TypeBoolean:
	default:
		t.Fatalf("%s: type %q", path, s.Type)
	}
	if s.Type != genai.TypeObject && (s.Properties != nil || s.Required != nil) {
		t.Fatalf("%s: properties on %s", path, s.Type)
	}
	if s.Type != genai.TypeArray && s.Items != nil {
		t.Fatalf("%s: items on %s", path, s.Type)
	}
	if s.Enum != nil && s.Type != genai.TypeString {
		t.Fatalf("%s: enum on %s", path, s.Type)
	}
	if s.AnyOf != nil {
		t.Fatalf("%s: anyOf", path)
	}
}
