package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ArgError reports arguments that do not fit a tool's schema. Its message
// names the offending field and is safe to show to the model.
type ArgError struct {
	Tool  string
	Field string // JSON path of the field ("paths/2"), empty for the whole object
	Msg   string
}

// Error names the tool and, when set, the field: the text the model reads
// to correct its call.
func (e *ArgError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, e.Msg)
	}
	return fmt.Sprintf("invalid arguments for %s: field %q: %s", e.Tool, e.Field, e.Msg)
}

// Validate checks raw arguments against the tool's schema and returns them
// with defaults applied. Empty input or JSON null count as an empty object.
// Unknown fields, wrong types and missing required fields are *ArgError.
func (t *Tool) Validate(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, &ArgError{Tool: t.spec.Name, Msg: "arguments must be one JSON object"}
	}
	if dec.More() {
		return nil, &ArgError{Tool: t.spec.Name, Msg: "arguments must be one JSON object"}
	}
	if err := t.checkFields(obj); err != nil {
		return nil, err
	}
	plain, err := numbersToFloat(obj)
	if err != nil {
		return nil, &ArgError{Tool: t.spec.Name, Msg: err.Error()}
	}
	if err := t.resolved.ApplyDefaults(&plain); err != nil {
		return nil, &ArgError{Tool: t.spec.Name, Msg: err.Error()}
	}
	if t.bounds != nil && !t.bounds.fits(t.bounds.root, plain) {
		return nil, &ArgError{Tool: t.spec.Name, Msg: tooComplex}
	}
	if err := t.resolved.Validate(plain); err != nil {
		return nil, schemaError(t.spec.Name, err)
	}
	out, err := json.Marshal(plain)
	if err != nil {
		return nil, &ArgError{Tool: t.spec.Name, Msg: err.Error()}
	}
	return out, nil
}

// checkFields gives the common mistakes (an unknown or missing top-level
// field) a precise message before the generic schema validation runs.
func (t *Tool) checkFields(obj map[string]any) error {
	s := t.resolved.Schema()
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
		var unknown []string
		for k := range obj {
			if _, ok := s.Properties[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return &ArgError{Tool: t.spec.Name, Field: unknown[0], Msg: "unknown field" + knownFields(s.PropertyOrder, s.Properties)}
		}
	}
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			return &ArgError{Tool: t.spec.Name, Field: r, Msg: "required field missing"}
		}
	}
	return nil
}

func knownFields[V any](order []string, props map[string]V) string {
	names := order
	if len(names) == 0 {
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
	}
	if len(names) == 0 {
		return "; this tool takes no arguments"
	}
	return "; fields are " + strings.Join(names, ", ")
}

// numbersToFloat converts json.Number values to float64 (what the schema
// validator expects), refusing numbers that do not fit.
func numbersToFloat(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s out of range", x)
		}
		return f, nil
	case map[string]any:
		for k, e := range x {
			c, err := numbersToFloat(e)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
		return x, nil
	case []any:
		for i, e := range x {
			c, err := numbersToFloat(e)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
		return x, nil
	}
	return v, nil
}

// schemaError turns a validator error into an ArgError naming the field. The
// validator's messages look like "validating /properties/paths/items: ...";
// the JSON pointer is turned into a field path.
func schemaError(name string, err error) error {
	msg := err.Error()
	field := ""
	if i := strings.Index(msg, "validating "); i >= 0 {
		rest := msg[i+len("validating "):]
		if j := strings.Index(rest, ": "); j >= 0 {
			field = pointerToField(rest[:j])
			msg = rest[j+2:]
		}
	}
	for {
		// Nested validator messages repeat the "validating" prefix; keep the innermost.
		i := strings.Index(msg, "validating ")
		if i < 0 {
			break
		}
		rest := msg[i+len("validating "):]
		j := strings.Index(rest, ": ")
		if j < 0 {
			break
		}
		if f := pointerToField(rest[:j]); f != "" {
			field = f
		}
		msg = rest[j+2:]
	}
	var ae *ArgError
	if errors.As(err, &ae) {
		return ae
	}
	return &ArgError{Tool: name, Field: field, Msg: msg}
}

func pointerToField(ptr string) string {
	var parts []string
	segs := strings.Split(strings.Trim(ptr, "/"), "/")
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				parts = append(parts, segs[i+1])
				i++
			}
		case "items", "prefixItems", "additionalProperties", "":
		default:
		}
	}
	return strings.Join(parts, ".")
}
