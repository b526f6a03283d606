package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/quiverhq/quiver/llm"
)

// Tool schemas travel as FunctionDeclaration.Parameters (genai.Schema, the
// OpenAPI 3.0 subset), not ParametersJsonSchema. Every Gemini model and both
// backends take Parameters, while parametersJsonSchema is newer and only some
// models honour it; and since the keywords that would need it ($ref, anyOf,
// ...) are refused anyway, translating into the typed struct loses nothing
// and makes "CheckTool accepted it" mean "it translated into a shape the API
// takes": the fuzz test checks exactly that.

// refused are the keywords Gemini cannot take faithfully, with why.
var refused = map[string]string{
	"$ref":                  "references are not supported",
	"$dynamicRef":           "references are not supported",
	"$defs":                 "definitions (and the references they serve) are not supported",
	"definitions":           "definitions (and the references they serve) are not supported",
	"oneOf":                 "schema combinators are not supported",
	"anyOf":                 "schema combinators are not supported",
	"allOf":                 "schema combinators are not supported",
	"not":                   "schema combinators are not supported",
	"if":                    "conditional schemas are not supported",
	"then":                  "conditional schemas are not supported",
	"else":                  "conditional schemas are not supported",
	"dependentSchemas":      "conditional schemas are not supported",
	"patternProperties":     "objects with pattern-named properties are not supported",
	"propertyNames":         "constraints on property names are not supported",
	"prefixItems":           "tuple arrays are not supported",
	"additionalItems":       "tuple arrays are not supported",
	"unevaluatedItems":      "tuple arrays are not supported",
	"contains":              "array content constraints are not supported",
	"minContains":           "array content constraints are not supported",
	"maxContains":           "array content constraints are not supported",
	"dependencies":          "conditional schemas are not supported",
	"dependentRequired":     "conditional requirements are not supported",
	"unevaluatedProperties": "only a boolean (dropped) is supported",
}

// dropped are keywords that only annotate, or constrain values the tool's
// own validator checks again before its handler runs: leaving them out
// changes nothing the tool accepts.
var dropped = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$anchor": true,
	"default": true, "examples": true, "example": true,
	"readOnly": true, "writeOnly": true, "deprecated": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"uniqueItems": true, "contentEncoding": true, "contentMediaType": true,
}

// translated are the keywords that have a genai.Schema field.
var translated = map[string]bool{
	"type": true, "description": true, "title": true, "nullable": true,
	"properties": true, "required": true, "additionalProperties": true,
	"minProperties": true, "maxProperties": true,
	"items": true, "minItems": true, "maxItems": true,
	"enum": true, "const": true, "format": true, "pattern": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true,
}

// formats are the format values Gemini takes per type; others are dropped
// (it rejects, for example, "uri" on a string).
var formats = map[genai.Type][]string{
	genai.TypeString:  {"date-time", "enum"},
	genai.TypeNumber:  {"float", "double"},
	genai.TypeInteger: {"int32", "int64"},
}

var types = map[string]genai.Type{
	"string": genai.TypeString, "number": genai.TypeNumber, "integer": genai.TypeInteger,
	"boolean": genai.TypeBoolean, "array": genai.TypeArray, "object": genai.TypeObject,
}

// funcName is what the Gemini API takes as a function name.
var funcName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

// schemaError is a schema Gemini cannot take: keyword at the JSON pointer
// path, and why.
type schemaError struct {
	keyword, path, reason string
}

func (e *schemaError) Error() string {
	if e.keyword == "" {
		return fmt.Sprintf("schema at %s: %s", e.path, e.reason)
	}
	return fmt.Sprintf("keyword %q at %s: %s", e.keyword, e.path, e.reason)
}

func refuse(path, keyword, format string, args ...any) error {
	return &schemaError{keyword: keyword, path: path, reason: fmt.Sprintf(format, args...)}
}

// declaration translates a tool declaration, or refuses it with an
// *llm.Error of kind ErrUnsupportedTool naming the keyword and its path.
func declaration(d llm.ToolDef) (*genai.FunctionDeclaration, error) {
	if !funcName.MatchString(d.Name) {
		return nil, unsupported(d.Name, "the name must be 1-64 letters, digits, '_', '.', ':' or '-', starting with a letter or '_'")
	}
	params, err := translateParams(d.Parameters)
	if err != nil {
		return nil, unsupported(d.Name, err.Error())
	}
	return &genai.FunctionDeclaration{Name: d.Name, Description: d.Description, Parameters: params}, nil
}

func unsupported(name, msg string) error {
	return &llm.Error{Kind: llm.ErrUnsupportedTool, Msg: fmt.Sprintf("gemini: tool %q: %s", name, msg)}
}

// translateParams translates a tool's parameter schema. A nil schema means
// the tool takes no parameters: Gemini rejects an object without properties,
// so an empty parameter object is sent as no parameters at all.
func translateParams(raw json.RawMessage) (*genai.Schema, error) {
	root, err := decodeSchema(raw)
	if err != nil || root == nil {
		return nil, err
	}
	s, err := translateRoot(root)
	if err != nil {
		return nil, err
	}
	if len(s.Properties) == 0 {
		return nil, nil
	}
	return s, nil
}

// decodeSchema parses raw, keeping numbers exact. Empty or null raw means
// no parameters.
func decodeSchema(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, refuse("#", "", "the schema is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse("#", "", "the schema is followed by more JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, refuse("#", "type", "the parameters must be an object schema")
	}
	return m, nil
}

func translateRoot(root map[string]any) (*genai.Schema, error) {
	if _, ok := root["type"]; !ok && root["properties"] == nil {
		// {} (or annotations only) takes any arguments; as parameters that
		// is an object with none declared.
		if err := checkKeywords(root, "#"); err != nil {
			return nil, err
		}
		return &genai.Schema{Type: genai.TypeObject}, nil
	}
	s, err := translate(root, "#", true)
	if err != nil {
		return nil, err
	}
	if s.Type != genai.TypeObject || (s.Nullable != nil && *s.Nullable) {
		return nil, refuse("#", "type", "the parameters must be an object schema")
	}
	return s, nil
}

// translate translates the schema m found at path. root relaxes the rule
// that an object must declare properties.
func translate(m map[string]any, path string, root bool) (*genai.Schema, error) {
	if err := checkKeywords(m, path); err != nil {
		return nil, err
	}
	typ, nullable, err := schemaType(m, path)
	if err != nil {
		return nil, err
	}
	s := &genai.Schema{Type: typ}
	if nullable {
		s.Nullable = genai.Ptr(true)
	}
	if s.Description, err = stringKeyword(m, path, "description"); err != nil {
		return nil, err
	}
	if s.Title, err = stringKeyword(m, path, "title"); err != nil {
		return nil, err
	}
	switch typ {
	case genai.TypeObject:
		err = objectKeywords(s, m, path, root)
	case genai.TypeArray:
		err = arrayKeywords(s, m, path)
	case genai.TypeString:
		err = stringKeywords(s, m, path)
	case genai.TypeNumber, genai.TypeInteger:
		err = numberKeywords(s, m, path)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := m["enum"]; ok && typ != genai.TypeString {
		return nil, refuse(path, "enum", "only string enums are supported")
	}
	if _, ok := m["const"]; ok && typ != genai.TypeString {
		return nil, refuse(path, "const", "only a string const is supported")
	}
	return s, nil
}

// checkKeywords refuses, in name order, the first keyword Gemini cannot
// take.
func checkKeywords(m map[string]any, path string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case translated[k], dropped[k], strings.HasPrefix(k, "x-"):
		case refused[k] != "":
			if k == "unevaluatedProperties" && isBool(m[k]) {
				continue
			}
			return refuse(path, k, "%s", refused[k])
		default:
			return refuse(path, k, "unknown keyword")
		}
	}
	if nb, ok := m["nullable"]; ok && !isBool(nb) {
		return refuse(path, "nullable", "must be a boolean")
	}
	return checkAdditional(m, path)
}

// checkAdditional drops additionalProperties when it is a boolean or the
// empty schema (Gemini rejects the keyword, and false only restates that
// the model should send the declared properties); a schema for the values of
// unnamed properties (a map) cannot be expressed and is refused.
func checkAdditional(m map[string]any, path string) error {
	v, ok := m["additionalProperties"]
	if !ok || isBool(v) {
		return nil
	}
	if sub, ok := v.(map[string]any); ok && len(sub) == 0 {
		return nil
	}
	return refuse(path, "additionalProperties", "maps (a schema for unnamed properties) are not supported")
}

func isBool(v any) bool {
	_, ok := v.(bool)
	return ok
}

// schemaType reads "type" (a name, or a name and "null"), inferring it from
// the other keywords when absent.
func schemaType(m map[string]any, path string) (genai.Type, bool, error) {
	nullable, _ := m["nullable"].(bool)
	v, ok := m["type"]
	if !ok {
		t, err := inferType(m, path)
		return t, nullable, err
	}
	var names []string
	switch v := v.(type) {
	case string:
		names = []string{v}
	case []any:
		for _, n := range v {
			s, ok := n.(string)
			if !ok {
				return "", false, refuse(path, "type", "type names must be strings")
			}
			if s == "null" {
				nullable = true
				continue
			}
			names = append(names, s)
		}
	default:
		return "", false, refuse(path, "type", "must be a type name or a list of them")
	}
	if len(names) != 1 {
		return "", false, refuse(path, "type", "exactly one type besides \"null\" is supported, got %d", len(names))
	}
	t, ok := types[names[0]]
	if !ok {
		return "", false, refuse(path, "type", "unknown type %q", names[0])
	}
	return t, nullable, nil
}

func inferType(m map[string]any, path string) (genai.Type, error) {
	switch {
	case m["properties"] != nil:
		return genai.TypeObject, nil
	case m["items"] != nil:
		return genai.TypeArray, nil
	case m["enum"] != nil, m["const"] != nil:
		return genai.TypeString, nil // checked by stringKeywords
	}
	return "", refuse(path, "type", "a schema without a type is not supported")
}

func stringKeyword(m map[string]any, path, key string) (string, error) {
	v, ok := m[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", refuse(path, key, "must be a string")
	}
	return s, nil
}

func objectKeywords(s *genai.Schema, m map[string]any, path string, root bool) error {
	props, err := properties(m, path)
	if err != nil {
		return err
	}
	if len(props) == 0 && !root {
		return refuse(path, "properties", "an object must declare its properties")
	}
	s.Properties = props
	if s.Required, err = required(m, path, props); err != nil {
		return err
	}
	if s.MinProperties, err = count(m, path, "minProperties"); err != nil {
		return err
	}
	s.MaxProperties, err = count(m, path, "maxProperties")
	return err
}

func properties(m map[string]any, path string) (map[string]*genai.Schema, error) {
	v, ok := m["properties"]
	if !ok {
		return nil, nil
	}
	pm, ok := v.(map[string]any)
	if !ok {
		return nil, refuse(path, "properties", "must be an object")
	}
	if len(pm) == 0 {
		return nil, nil
	}
	out := make(map[string]*genai.Schema, len(pm))
	for name, sub := range pm {
		p := path + "/properties/" + escapePointer(name)
		sm, ok := sub.(map[string]any)
		if !ok {
			return nil, refuse(p, "type", "a property's schema must be an object")
		}
		ps, err := translate(sm, p, false)
		if err != nil {
			return nil, err
		}
		out[name] = ps
	}
	return out, nil
}

// required keeps the names in order; Gemini rejects a required name that
// is not a declared property.
func required(m map[string]any, path string, props map[string]*genai.Schema) ([]string, error) {
	v, ok := m["required"]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, refuse(path, "required", "must be a list of property names")
	}
	var out []string
	for _, n := range list {
		name, ok := n.(string)
		if !ok {
			return nil, refuse(path, "required", "must be a list of property names")
		}
		if props[name] == nil {
			return nil, refuse(path, "required", "%q is not a declared property", name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

func arrayKeywords(s *genai.Schema, m map[string]any, path string) error {
	v, ok := m["items"]
	if !ok {
		return refuse(path, "items", "an array must declare its item schema")
	}
	im, ok := v.(map[string]any)
	if !ok {
		return refuse(path, "items", "tuple arrays and boolean item schemas are not supported")
	}
	items, err := translate(im, path+"/items", false)
	if err != nil {
		return err
	}
	s.Items = items
	if s.MinItems, err = count(m, path, "minItems"); err != nil {
		return err
	}
	s.MaxItems, err = count(m, path, "maxItems")
	return err
}

func stringKeywords(s *genai.Schema, m map[string]any, path string) error {
	var err error
	if s.Enum, err = enum(m, path); err != nil {
		return err
	}
	if s.Format, err = format(m, path, genai.TypeString); err != nil {
		return err
	}
	if s.Pattern, err = stringKeyword(m, path, "pattern"); err != nil {
		return err
	}
	if s.MinLength, err = count(m, path, "minLength"); err != nil {
		return err
	}
	s.MaxLength, err = count(m, path, "maxLength")
	return err
}

// enum reads enum, or const as a one-value enum; values must be strings.
func enum(m map[string]any, path string) ([]string, error) {
	if c, ok := m["const"]; ok {
		s, ok := c.(string)
		if !ok {
			return nil, refuse(path, "const", "only a string const is supported")
		}
		return []string{s}, nil
	}
	v, ok := m["enum"]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, refuse(path, "enum", "must be a non-empty list")
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, refuse(path, "enum", "only string enums are supported")
		}
		out[i] = s
	}
	return out, nil
}

func numberKeywords(s *genai.Schema, m map[string]any, path string) error {
	var err error
	if s.Format, err = format(m, path, s.Type); err != nil {
		return err
	}
	if s.Minimum, err = number(m, path, "minimum"); err != nil {
		return err
	}
	s.Maximum, err = number(m, path, "maximum")
	return err
}

// format keeps the formats Gemini takes for typ and drops the others.
func format(m map[string]any, path string, typ genai.Type) (string, error) {
	f, err := stringKeyword(m, path, "format")
	if err != nil || !slices.Contains(formats[typ], f) {
		return "", err
	}
	return f, nil
}

func number(m map[string]any, path, key string) (*float64, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, refuse(path, key, "must be a number")
	}
	f, err := n.Float64()
	if err != nil {
		return nil, refuse(path, key, "must be a finite number")
	}
	return &f, nil
}

func count(m map[string]any, path, key string) (*int64, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return nil, refuse(path, key, "must be a non-negative integer")
	}
	// JSON Schema counts 100.0 as an integer too.
	f, err := n.Float64()
	if err != nil || f < 0 || f > 1<<53 || f != math.Trunc(f) {
		return nil, refuse(path, key, "must be a non-negative integer")
	}
	i := int64(f)
	return &i, nil
}

// escapePointer escapes a property name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
