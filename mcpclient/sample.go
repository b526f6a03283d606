package mcpclient

import "encoding/json"

// sampleArgs builds arguments for a tool from its input schema: every
// required property with its default, const or first enum value when the
// schema gives one, else a plain value of its type ("test", 1, true, []
// or {}). A schema it cannot read gives {}.
func sampleArgs(schema any) json.RawMessage {
	raw, _ := json.Marshal(schema)
	var s sampleSchema
	if json.Unmarshal(raw, &s) != nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(s.sample(0))
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// sampleSchema is the part of a JSON schema sampleArgs reads.
type sampleSchema struct {
	Type       any                      `json:"type"`
	Properties map[string]*sampleSchema `json:"properties"`
	Required   []string                 `json:"required"`
	Default    any                      `json:"default"`
	Const      any                      `json:"const"`
	Enum       []any                    `json:"enum"`
	Format     string                   `json:"format"`
}

// sample is a value s accepts; objects nested deeper than 8 are empty.
func (s *sampleSchema) sample(depth int) any {
	switch {
	case s == nil:
		return "test"
	case s.Default != nil:
		return s.Default
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	switch s.typeName() {
	case "object":
		obj := map[string]any{}
		if depth < 8 {
			for _, name := range s.Required {
				obj[name] = s.Properties[name].sample(depth + 1)
			}
		}
		return obj
	case "array":
		return []any{}
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "null":
		return nil
	}
	if s.Format == "uri" || s.Format == "url" {
		return "https://example.com/"
	}
	return "test"
}

// typeName returns the schema's type, the first non-null one of a list.
func (s *sampleSchema) typeName() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if name, ok := e.(string); ok && name != "null" {
				return name
			}
		}
	}
	if s.Properties != nil {
		return "object"
	}
	return ""
}
