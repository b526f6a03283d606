package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/quiverhq/quiver/tool"
)

type echoIn struct {
	Paths []string `json:"paths" jsonschema:"files"`
	Count int      `json:"count,omitempty"`
	Inner *struct {
		Name string `json:"name"`
	} `json:"inner,omitempty"`
}

func echoTool() *tool.Tool {
	return tool.New(tool.Spec{
		Name: "echo", Description: "Echo the arguments.",
		Tune: func(s *jsonschema.Schema) {
			n := 3
			s.Properties["paths"].MaxItems = &n
		},
	}, func(_ context.Context, _ tool.Scope, in echoIn) (echoIn, error) { return in, nil })
}

func TestValidate(t *testing.T) {
	tl := echoTool()
	tests := []struct {
		name      string
		args      string
		wantField string
		wantMsg   string
	}{
		{name: "ok", args: `{"paths":["a"]}`},
		{name: "unknown field", args: `{"paths":[],"extra":1}`, wantField: "extra", wantMsg: "unknown field"},
		{name: "case differs is unknown", args: `{"Paths":[]}`, wantField: "Paths", wantMsg: "unknown field"},
		{name: "missing required", args: `{}`, wantField: "paths", wantMsg: "required"},
		{name: "empty means object", args: ``, wantField: "paths", wantMsg: "required"},
		{name: "wrong type", args: `{"paths":"a"}`, wantField: "paths", wantMsg: "type"},
		{name: "wrong item type", args: `{"paths":[1]}`, wantField: "paths", wantMsg: "type"},
		{name: "too many items", args: `{"paths":["a","b","c","d"]}`, wantField: "paths", wantMsg: "maxItems"},
		{name: "fraction for integer", args: `{"paths":[],"count":1.5}`, wantField: "count", wantMsg: "integer"},
		{name: "nested wrong type", args: `{"paths":[],"inner":{"name":1}}`, wantField: "inner.name", wantMsg: "type"},
		{name: "nested unknown", args: `{"paths":[],"inner":{"name":"x","y":2}}`, wantField: "inner", wantMsg: "additional"},
		{name: "array not object", args: `[1]`, wantMsg: "one JSON object"},
		{name: "trailing data", args: `{"paths":[]} {}`, wantMsg: "one JSON object"},
		{name: "not json", args: `{paths:`, wantMsg: "one JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tl.Run(context.Background(), tool.Scope{}, json.RawMessage(tc.args))
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return
			}
			var ae *tool.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("Run error = %v, want *ArgError", err)
			}
			if ae.Field != tc.wantField || !strings.Contains(ae.Error(), tc.wantMsg) {
				t.Errorf("got field %q, message %q; want field %q containing %q", ae.Field, ae.Error(), tc.wantField, tc.wantMsg)
			}
			if tc.wantField != "" && !strings.Contains(ae.Error(), `"`+tc.wantField+`"`) {
				t.Errorf("message %q does not name the field", ae.Error())
			}
		})
	}
}

func TestTypedOutput(t *testing.T) {
	res, err := echoTool().Run(context.Background(), tool.Scope{}, json.RawMessage(`{"paths":["x"],"count":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"paths":["x"],"count":2}`, res.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

func TestSchemaIsPlainObject(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(echoTool().Schema(), &s); err != nil {
		t.Fatal(err)
	}
	if s["type"] != "object" || s["additionalProperties"] != false {
		t.Errorf("schema = %v, want a closed object schema", s)
	}
	paths := s["properties"].(map[string]any)["paths"].(map[string]any)
	if paths["type"] != "array" {
		t.Errorf("paths type = %v, want plain \"array\" (no null)", paths["type"])
	}
}

func TestNewPanicsOnProgrammingErrors(t *testing.T) {
	h := func(context.Context, tool.Scope, echoIn) (string, error) { return "", nil }
	tests := map[string]tool.Spec{
		"bad name":       {Name: "Bad Name", Description: "d"},
		"no description": {Name: "ok"},
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New did not panic")
				}
			}()
			tool.New(spec, h)
		})
	}
	t.Run("non-object input", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("New did not panic")
			}
		}()
		tool.New(tool.Spec{Name: "x", Description: "d"}, func(context.Context, tool.Scope, []string) (string, error) { return "", nil })
	})
}

func TestInfra(t *testing.T) {
	base := errors.New("disk gone")
	if !tool.IsInfra(tool.Infra(base)) || !errors.Is(tool.Infra(base), base) {
		t.Error("Infra error not recognised or not unwrapping")
	}
	if tool.IsInfra(base) || tool.Infra(nil) != nil {
		t.Error("plain error counted as infra, or Infra(nil) != nil")
	}
}

func TestEffects(t *testing.T) {
	tl := tool.New(tool.Spec{Name: "p", Description: "d"}, func(context.Context, tool.Scope, struct{}) (pauser, error) { return pauser{}, nil })
	res, err := tl.Run(context.Background(), tool.Scope{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := tool.Result{Content: "paused", Effect: tool.Effect{Pause: &tool.Pause{Question: "why?"}}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

type pauser struct{}

func (pauser) ModelText() string       { return "paused" }
func (pauser) ToolEffect() tool.Effect { return tool.Effect{Pause: &tool.Pause{Question: "why?"}} }

func FuzzValidateArgs(f *testing.F) {
	for _, s := range []string{`{"paths":["a"]}`, `{}`, `null`, `[]`, `{"paths":[1,{"a":2}],"count":1e400}`, `{"inner":{"name":"x"}}`, "\xff"} {
		f.Add([]byte(s))
	}
	tl := echoTool()
	f.Fuzz(func(t *testing.T, data []byte) {
		norm, err := tl.Validate(data)
		if err != nil {
			var ae *tool.ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("Validate error %v is not an *ArgError", err)
			}
			return
		}
		// Accepted arguments are a JSON object that validates again unchanged.
		again, err := tl.Validate(norm)
		if err != nil || string(again) != string(norm) {
			t.Fatalf("re-validate %s: %s, %v", norm, again, err)
		}
	})
}

// TestBind: Bind refuses what Run refuses, with the same *ArgError, and
// the call it returns runs the handler on the normalised arguments (the
// schema's default applied).
func TestBind(t *testing.T) {
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","default":5}},"required":["q"],"additionalProperties":false}`), &schema); err != nil {
		t.Fatal(err)
	}
	var got string
	tl := tool.NewRaw(tool.Spec{Name: "look", Description: "Looks."}, &schema, func(_ context.Context, _ tool.Scope, args json.RawMessage) (tool.Result, error) {
		got = string(args)
		return tool.Result{Content: "ok"}, nil
	})
	var ae *tool.ArgError
	if _, err := tl.Bind(json.RawMessage(`{"n":1}`)); !errors.As(err, &ae) || ae.Field != "q" {
		t.Errorf("Bind without the required field: %v, want an *ArgError on q", err)
	}
	b, err := tl.Bind(json.RawMessage(` {"q":"x"} `))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := b.Run(context.Background(), tool.Scope{}); err != nil || res.Content != "ok" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if diff := cmp.Diff(`{"n":5,"q":"x"}`, got); diff != "" {
		t.Errorf("handler arguments (-want +got):\n%s", diff)
	}
}
