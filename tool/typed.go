package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Texter is implemented by outputs that render themselves for the model.
// Outputs that are neither a string nor a Texter are sent as JSON.
type Texter interface {
	ModelText() string
}

// Effector is implemented by outputs that ask something of the loop or the
// surface (a pause, next-action suggestions).
type Effector interface {
	ToolEffect() Effect
}

// Imager is implemented by outputs that carry images for a vision model
// (Result.Images) beside their text.
type Imager interface {
	ToolImages() []Image
}

// New builds a typed tool. The input schema is inferred once from In (json
// tags name the fields, jsonschema tags describe them, omitempty marks
// optional fields) and then adjusted by spec.Tune. Arguments are validated
// against it and decoded strictly into In before h runs. An error from h is
// shown to the model, unless it is marked with [Infra].
//
// New panics on programming errors, as [NewRaw] does, and when In does not
// infer to an object schema.
func New[In, Out any](spec Spec, h func(ctx context.Context, s Scope, in In) (Out, error)) *Tool {
	if !namePattern.MatchString(spec.Name) {
		panic(fmt.Sprintf("tool: invalid name %q: built-in tools use lower snake case", spec.Name))
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: infer schema: %v", spec.Name, err))
	}
	return NewRaw(spec, schema, func(ctx context.Context, s Scope, args json.RawMessage) (Result, error) {
		var in In
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return Result{}, &ArgError{Tool: spec.Name, Msg: err.Error()}
		}
		out, err := h(ctx, s, in)
		if err != nil {
			return Result{}, err
		}
		return toResult(out)
	})
}

func toResult(out any) (Result, error) {
	var r Result
	switch v := out.(type) {
	case Result:
		return v, nil
	case string:
		r.Content = v
	case Texter:
		r.Content = v.ModelText()
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return Result{}, Infra(fmt.Errorf("encode tool output: %w", err))
		}
		r.Content = string(b)
	}
	if e, ok := out.(Effector); ok {
		r.Effect = e.ToolEffect()
	}
	if im, ok := out.(Imager); ok {
		r.Images = im.ToolImages()
	}
	return r, nil
}
