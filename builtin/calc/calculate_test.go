package calc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
)

func TestToolSpec(t *testing.T) {
	s := Tool().Spec()
	type view struct {
		Name, Family string
		Macros       []string
		Access       tool.Access
		AlwaysOn     bool
		Limits       []tool.Limit
	}
	want := view{
		Name: "calculate", Family: "calc", Macros: []string{"calculator_tool"},
		Access: tool.Read, AlwaysOn: true,
		Limits: []tool.Limit{{Name: "expression_chars", Value: 1000}, {Name: "paren_depth", Value: 64}},
	}
	got := view{s.Name, s.Family, s.Macros, s.Access, s.AlwaysOn, s.Limits}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spec mismatch (-want +got):\n%s", diff)
	}
}

// TestDefinitionSize bounds what the tool costs in every request: it is
// always on, so its definition is paid on every turn.
func TestDefinitionSize(t *testing.T) {
	const limit = 900
	tl := Tool()
	def, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}{tl.Name(), tl.Spec().Description, tl.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("definition is %d bytes: %s", len(def), def)
	if len(def) > limit {
		t.Errorf("definition is %d bytes, want at most %d", len(def), limit)
	}
}

func TestToolRun(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
		argErr  bool // the error must be a *tool.ArgError
	}{
		{name: "sum", args: `{"expression":"0.1+0.2"}`, want: "0.3"},
		{name: "percent", args: `{"expression":"200 × 15%"}`, want: "30"},
		{name: "large", args: `{"expression":"1e21"}`, want: "1e+21"},
		{name: "evaluation error", args: `{"expression":"1/0"}`, wantErr: "division by zero"},
		{name: "syntax error", args: `{"expression":"1+2*)"}`, wantErr: `syntax error at position 5: unexpected ")"`},
		{name: "unknown field", args: `{"expression":"1","precision":3}`, argErr: true},
		{name: "missing expression", args: `{}`, argErr: true},
		{name: "wrong type", args: `{"expression":5}`, argErr: true},
		{name: "not an object", args: `["1+1"]`, argErr: true},
	}
	tl := Tool()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tl.Run(context.Background(), tool.Scope{}, json.RawMessage(tc.args))
			var ae *tool.ArgError
			if got := errors.As(err, &ae); got != tc.argErr {
				t.Fatalf("Run(%s) error = %v, want an *tool.ArgError: %v", tc.args, err, tc.argErr)
			}
			if tc.argErr {
				return
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(outcome{Value: tc.want, Err: tc.wantErr}, outcome{Value: res.Content, Err: gotErr}); diff != "" {
				t.Errorf("Run(%s) mismatch (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
