package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleDefs are two definitions with every field set.
func sampleDefs() []ToolDef {
	return []ToolDef{
		{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "calc", Description: "Calculates.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
}

// TestToolCacheComparesEveryField: a change to any field of any
// definition (found by reflection, so a field added to ToolDef is
// covered without this test naming it), or to the list's length or
// order, builds anew; equal definitions are built once.
func TestToolCacheComparesEveryField(t *testing.T) {
	c := NewToolCache[string](0)
	build := func(defs []ToolDef) (string, error) { return fmt.Sprint(defs), nil }
	if _, err := c.Get(sampleDefs(), build); err != nil {
		t.Fatal(err)
	}
	if _, _ = c.Get(sampleDefs(), build); c.builds != 1 {
		t.Fatalf("%d builds for the same definitions twice", c.builds)
	}
	changed := 0
	for i := range 2 {
		for f := range reflect.TypeFor[ToolDef]().NumField() {
			defs := sampleDefs()
			v := reflect.ValueOf(&defs[i]).Elem().Field(f)
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Slice:
				v.SetBytes(append(append([]byte(nil), v.Bytes()[:len(v.Bytes())-1]...), ' ', '}'))
			default:
				t.Fatalf("ToolDef.%s is a %s: teach this test and equalDefs about it", v.Type().Name(), v.Kind())
			}
			before := c.builds
			got, _ := c.Get(defs, build)
			if c.builds != before+1 || got != fmt.Sprint(defs) {
				t.Errorf("definition %d, field %d changed: served %q", i, f, got)
			}
			changed++
		}
	}
	for name, defs := range map[string][]ToolDef{
		"one fewer": sampleDefs()[:1],
		"reversed":  {sampleDefs()[1], sampleDefs()[0]},
		"no schema": {{Name: "read_file", Description: "Reads a file."}, sampleDefs()[1]},
	} {
		before := c.builds
		if got, _ := c.Get(defs, build); c.builds != before+1 || got != fmt.Sprint(defs) {
			t.Errorf("%s: served %q", name, got)
		}
	}
	if changed < 6 {
		t.Errorf("%d fields changed; the walk missed some", changed)
	}
}

// TestToolCacheKeepsItsOwnCopy: changing the caller's schema bytes after
// a build does not change what the entry is compared with.
func TestToolCacheKeepsItsOwnCopy(t *testing.T) {
	c := NewToolCache[string](0)
	build := func(defs []ToolDef) (string, error) { return string(defs[0].Parameters), nil }
	defs := sampleDefs()
	c.Get(defs, build)
	defs[0].Parameters[2] = 'X' // the caller reuses its buffer
	if got, _ := c.Get(defs, build); got != string(defs[0].Parameters) {
		t.Errorf("served %q for %q", got, defs[0].Parameters)
	}
}

// TestToolCacheBoundsAndErrors: a failed build is not kept, the cache
// never holds more than its size, and a nil cache builds every time.
func TestToolCacheBoundsAndErrors(t *testing.T) {
	c := NewToolCache[int](3)
	calls := 0
	fail := func([]ToolDef) (int, error) { calls++; return 0, errors.New("bad schema") }
	for range 2 {
		if _, err := c.Get(sampleDefs(), fail); err == nil {
			t.Fatal("no error")
		}
	}
	if calls != 2 || c.n != 0 {
		t.Errorf("a failed build was kept (%d calls, %d entries)", calls, c.n)
	}
	for i := range 10 {
		defs := []ToolDef{{Name: fmt.Sprint("t", i)}}
		c.Get(defs, func([]ToolDef) (int, error) { return i, nil })
		if c.n > 3 {
			t.Fatalf("%d entries; at most 3", c.n)
		}
	}
	var none *ToolCache[int]
	for want := range 2 {
		if got, _ := none.Get(sampleDefs(), func([]ToolDef) (int, error) { return want, nil }); got != want {
			t.Errorf("nil cache served %d, want a build (%d)", got, want)
		}
	}
}

// TestChecks: an answer, a refusal included, is worked out once per
// definition; another definition is checked anew; a nil Checks checks
// every time.
func TestChecks(t *testing.T) {
	c := NewChecks(0)
	calls := 0
	check := func(d ToolDef) error {
		calls++
		if d.Name == "bad" {
			return errors.New("refused")
		}
		return nil
	}
	for range 3 {
		if err := c.Check(sampleDefs()[0], check); err != nil {
			t.Errorf("good: %v", err)
		}
		if err := c.Check(ToolDef{Name: "bad"}, check); err == nil || err.Error() != "refused" {
			t.Errorf("bad: %v", err)
		}
	}
	if calls != 2 {
		t.Errorf("%d checks for two definitions asked three times each", calls)
	}
	var none *Checks
	for range 2 {
		none.Check(sampleDefs()[0], check)
	}
	if calls != 4 {
		t.Errorf("a nil Checks kept an answer (%d checks)", calls)
	}
}

// sdkDecl stands for an SDK's declaration type: it encodes as text, or
// as override when it is one; bad fails to encode.
type sdkDecl struct {
	text     string
	override json.RawMessage
	bad      bool
}

func (d sdkDecl) MarshalJSON() ([]byte, error) {
	switch {
	case d.bad:
		return nil, errors.New("no")
	case d.override != nil:
		return d.override, nil
	}
	return []byte(d.text), nil
}

// TestEncodeOnce: each declaration becomes an override of its own bytes,
// except one whose override would send other bytes (it stays as it was);
// one that cannot be encoded stops with its index.
func TestEncodeOnce(t *testing.T) {
	// An override of this SDK compacts what it carries, so a spaced
	// encoding would not come back the same.
	override := func(raw any) sdkDecl {
		return sdkDecl{override: bytes.ReplaceAll(raw.(json.RawMessage), []byte(" "), nil)}
	}
	decls := []sdkDecl{{text: `{"a":1}`}, {text: `{"b": 2}`}}
	fail := func(i int, err error) error { return fmt.Errorf("declaration %d: %w", i, err) }
	if err := EncodeOnce(decls, override, fail); err != nil {
		t.Fatal(err)
	}
	want := []sdkDecl{{override: json.RawMessage(`{"a":1}`)}, {text: `{"b": 2}`}}
	if diff := cmp.Diff(want, decls, cmp.AllowUnexported(sdkDecl{})); diff != "" {
		t.Errorf("declarations (-want +got):\n%s", diff)
	}
	err := EncodeOnce([]sdkDecl{{text: `{}`}, {bad: true}}, override, fail)
	if err == nil || err.Error() != "declaration 1: no" {
		t.Errorf("error %v, want declaration 1: no", err)
	}
}
