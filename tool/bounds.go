package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Bounds on the work a schema's references can cause. A schema of a few
// kilobytes whose $defs each refer to the next one twice stands for 2^n
// subschemas once its references are followed: validating one small
// argument object against it, or a default inside it, would never end.
const (
	// MaxSchemaExpansion caps how many subschemas an input schema stands
	// for with every $ref followed (a reference back into a schema being
	// followed, recursion, is counted once and not followed again). A
	// tool whose schema stands for more is refused when it is built.
	MaxSchemaExpansion = 10_000
	// MaxValidationSteps caps how many (subschema, value) pairs the
	// validation of one argument object, or of one default, may visit
	// when the schema has references: recursion through a property lets
	// the size of the arguments multiply the work. Arguments past it are
	// refused with an *ArgError before validation runs.
	MaxValidationSteps = 1 << 18
)

// tooComplex is the message of arguments past MaxValidationSteps.
var tooComplex = fmt.Sprintf("arguments are too deeply nested for this tool's schema to check (more than %d steps)", MaxValidationSteps)

// refBounds resolves the in-document references of one schema and counts
// the work they cause. It is read-only once built, so safe for
// concurrent use.
type refBounds struct {
	root    *jsonschema.Schema
	anchors map[string]*jsonschema.Schema
	targets map[*jsonschema.Schema]*jsonschema.Schema // schema with $ref → referred schema
}

// newRefBounds checks the references of root: each must point into root
// (a JSON pointer or a plain-name anchor), no chain of references may
// return to a schema without passing a property or item (validation
// would never end), and the schema must stand for at most
// MaxSchemaExpansion subschemas. It returns nil, nil when root has no
// reference: validation then applies each subschema at most once to each
// value of the arguments.
func newRefBounds(root *jsonschema.Schema) (*refBounds, error) {
	b := &refBounds{root: root, anchors: map[string]*jsonschema.Schema{}, targets: map[*jsonschema.Schema]*jsonschema.Schema{}}
	var refs []*jsonschema.Schema
	var dynamic, ids bool
	walk(root, func(s *jsonschema.Schema) {
		// A $ref names a dynamic anchor as it names a plain one.
		for _, a := range [...]string{s.Anchor, s.DynamicAnchor} {
			if a != "" {
				b.anchors[a] = s
			}
		}
		if s.Ref != "" {
			refs = append(refs, s)
		}
		dynamic = dynamic || s.DynamicRef != ""
		ids = ids || (s != root && s.ID != "")
	})
	switch {
	case dynamic:
		return nil, errors.New("input schema uses $dynamicRef, which is not supported")
	case len(refs) == 0:
		return nil, nil
	case ids:
		// A nested $id starts a new base for the references inside it.
		return nil, errors.New("input schema uses $ref with a nested $id, which is not supported")
	}
	for _, s := range refs {
		t, err := b.lookup(s.Ref)
		if err != nil {
			return nil, fmt.Errorf("input schema: $ref %q: %w", s.Ref, err)
		}
		b.targets[s] = t
	}
	if err := b.checkExpansion(); err != nil {
		return nil, err
	}
	return b, nil
}

// lookup finds the schema a reference names inside root.
func (b *refBounds) lookup(ref string) (*jsonschema.Schema, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, errors.New("only references into the schema itself (#...) are supported")
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, errors.New("the fragment is not escaped correctly")
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if t := b.anchors[frag]; t != nil {
			return t, nil
		}
		return nil, errors.New("no such anchor")
	}
	toks := strings.Split(frag, "/")[1:]
	s := b.root
	for i := 0; i < len(toks) && s != nil; i++ {
		tok := unescapeToken(toks[i])
		if c, ok := singleChild(s, tok); ok {
			s = c
			continue
		}
		if i+1 == len(toks) {
			return nil, errors.New("it points at no schema")
		}
		i++
		s = entryChild(s, tok, unescapeToken(toks[i]))
	}
	if s == nil {
		return nil, errors.New("it points at no schema")
	}
	return s, nil
}

// unescapeToken undoes a JSON pointer token's escapes (~1 is /, ~0 is ~).
func unescapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// singleChild is the subschema under keyword tok of s when tok holds one
// schema (ok false when tok is no such keyword).
func singleChild(s *jsonschema.Schema, tok string) (c *jsonschema.Schema, ok bool) {
	switch tok {
	case "additionalItems":
		return s.AdditionalItems, true
	case "contains":
		return s.Contains, true
	case "unevaluatedItems":
		return s.UnevaluatedItems, true
	case "additionalProperties":
		return s.AdditionalProperties, true
	case "propertyNames":
		return s.PropertyNames, true
	case "unevaluatedProperties":
		return s.UnevaluatedProperties, true
	case "not":
		return s.Not, true
	case "if":
		return s.If, true
	case "then":
		return s.Then, true
	case "else":
		return s.Else, true
	case "contentSchema":
		return s.ContentSchema, true
	case "items":
		if s.ItemsArray == nil {
			return s.Items, true
		}
	}
	return nil, false
}

// entryChild is the entry key of the map or list keyword tok of s, or nil.
func entryChild(s *jsonschema.Schema, tok, key string) *jsonschema.Schema {
	var m map[string]*jsonschema.Schema
	var list []*jsonschema.Schema
	switch tok {
	case "$defs":
		m = s.Defs
	case "definitions":
		m = s.Definitions
	case "properties":
		m = s.Properties
	case "patternProperties":
		m = s.PatternProperties
	case "dependentSchemas":
		m = s.DependentSchemas
	case "dependencies":
		m = s.DependencySchemas
	case "allOf":
		list = s.AllOf
	case "anyOf":
		list = s.AnyOf
	case "oneOf":
		list = s.OneOf
	case "prefixItems":
		list = s.PrefixItems
	case "items":
		list = s.ItemsArray
	}
	if m != nil {
		return m[key]
	}
	i, err := strconv.Atoi(key)
	if err != nil || i < 0 || i >= len(list) {
		return nil
	}
	return list[i]
}

// eachInPlace calls f on each subschema of s that applies to the same
// value as s, until f returns false; it reports whether f never did.
func eachInPlace(s *jsonschema.Schema, f func(*jsonschema.Schema) bool) bool {
	for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range l {
			if !f(c) {
				return false
			}
		}
	}
	for _, c := range [...]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if c != nil && !f(c) {
			return false
		}
	}
	for _, m := range [...]map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			if !f(c) {
				return false
			}
		}
	}
	return true
}

// eachNested calls f on each subschema of s that applies to a property,
// an item or a property name of the value s applies to, until f returns
// false; it reports whether f never did.
func eachNested(s *jsonschema.Schema, f func(*jsonschema.Schema) bool) bool {
	for _, m := range [...]map[string]*jsonschema.Schema{s.Properties, s.PatternProperties} {
		for _, c := range m {
			if !f(c) {
				return false
			}
		}
	}
	for _, l := range [...][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray} {
		for _, c := range l {
			if !f(c) {
				return false
			}
		}
	}
	for _, c := range [...]*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems,
		s.AdditionalProperties, s.PropertyNames, s.UnevaluatedProperties, s.ContentSchema} {
		if c != nil && !f(c) {
			return false
		}
	}
	return true
}

// walk calls f on s and on every subschema written inside it ($defs
// included), once each, following no reference. A schema built in Go may
// hold one subschema in several places; it is visited once.
func walk(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	seen := map[*jsonschema.Schema]bool{}
	var visit func(s *jsonschema.Schema) bool
	visit = func(s *jsonschema.Schema) bool {
		if s == nil || seen[s] {
			return true
		}
		seen[s] = true
		f(s)
		eachInPlace(s, visit)
		eachNested(s, visit)
		for _, m := range [...]map[string]*jsonschema.Schema{s.Defs, s.Definitions} {
			for _, c := range m {
				visit(c)
			}
		}
		return true
	}
	visit(s)
}

// checkExpansion counts the subschemas root stands for with references
// followed, stopping at MaxSchemaExpansion, and refuses a reference loop
// that passes no property or item.
func (b *refBounds) checkExpansion() error {
	type frame struct {
		s     *jsonschema.Schema
		depth int // how many property/item steps led here
	}
	var stack []frame
	var err error
	visits := 0
	var visit func(s *jsonschema.Schema, depth int) bool
	visit = func(s *jsonschema.Schema, depth int) bool {
		for _, f := range stack {
			if f.s == s {
				if f.depth == depth {
					err = errors.New("input schema has a $ref loop that never reaches a property or item")
					return false
				}
				return true // recursion: bounded by the arguments, counted at call time
			}
		}
		if visits++; visits > MaxSchemaExpansion {
			err = fmt.Errorf("input schema stands for more than %d subschemas once its $ref references are followed", MaxSchemaExpansion)
			return false
		}
		stack = append(stack, frame{s, depth})
		defer func() { stack = stack[:len(stack)-1] }()
		if t := b.targets[s]; t != nil && !visit(t, depth) {
			return false
		}
		return eachInPlace(s, func(c *jsonschema.Schema) bool { return visit(c, depth) }) &&
			eachNested(s, func(c *jsonschema.Schema) bool { return visit(c, depth+1) })
	}
	visit(b.root, 0)
	return err
}

// fits reports whether validating v (a decoded JSON value) against s
// visits at most MaxValidationSteps (subschema, value) pairs. It counts
// every keyword that could apply (every pattern property, every branch),
// so it is an upper bound of what validation does.
func (b *refBounds) fits(s *jsonschema.Schema, v any) bool {
	steps := 0
	var visit func(s *jsonschema.Schema, v any) bool
	visit = func(s *jsonschema.Schema, v any) bool {
		if steps++; steps > MaxValidationSteps {
			return false
		}
		if t := b.targets[s]; t != nil && !visit(t, v) {
			return false
		}
		if !eachInPlace(s, func(c *jsonschema.Schema) bool { return visit(c, v) }) {
			return false
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !visitProperty(s, k, e, visit) {
					return false
				}
			}
		case []any:
			for i, e := range x {
				if !visitItem(s, i, e, visit) {
					return false
				}
			}
		}
		return true
	}
	return visit(s, v)
}

// visitProperty visits the subschemas of s that may apply to the
// property k (value e) or to its name.
func visitProperty(s *jsonschema.Schema, k string, e any, visit func(*jsonschema.Schema, any) bool) bool {
	if c := s.Properties[k]; c != nil && !visit(c, e) {
		return false
	}
	for _, c := range s.PatternProperties {
		if !visit(c, e) {
			return false
		}
	}
	for _, c := range []*jsonschema.Schema{s.AdditionalProperties, s.UnevaluatedProperties} {
		if c != nil && !visit(c, e) {
			return false
		}
	}
	return s.PropertyNames == nil || visit(s.PropertyNames, k)
}

// visitItem visits the subschemas of s that may apply to the item i
// (value e).
func visitItem(s *jsonschema.Schema, i int, e any, visit func(*jsonschema.Schema, any) bool) bool {
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray} {
		if i < len(l) && !visit(l[i], e) {
			return false
		}
	}
	for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems} {
		if c != nil && !visit(c, e) {
			return false
		}
	}
	return true
}

// checkDefaults refuses a default whose validation against its subschema
// (which resolving the schema does) would pass MaxValidationSteps. A nil
// b has no references: nothing to check.
func (b *refBounds) checkDefaults() error {
	if b == nil {
		return nil
	}
	var err error
	walk(b.root, func(s *jsonschema.Schema) {
		if err != nil || s.Default == nil {
			return
		}
		var v any
		if json.Unmarshal(s.Default, &v) != nil {
			return // Resolve reports it
		}
		if !b.fits(s, v) {
			err = fmt.Errorf("input schema has a default too deeply nested to check (more than %d steps)", MaxValidationSteps)
		}
	})
	return err
}
