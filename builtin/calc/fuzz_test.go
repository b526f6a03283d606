package calc

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/tool"
)

// FuzzEval checks that Eval never panics, that its errors are one-line
// messages, that it is deterministic, and that every value it returns is
// finite and reads back from its Format output. Seeds are in
// testdata/fuzz/FuzzEval.
func FuzzEval(f *testing.F) {
	f.Fuzz(func(t *testing.T, expr string) {
		v, err := Eval(expr)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("Eval(%q) error %q is not a one-line message", expr, msg)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("Eval(%q) = %v, want a finite number", expr, v)
		}
		again, err := Eval(expr)
		if err != nil || math.Float64bits(again) != math.Float64bits(v) {
			t.Fatalf("Eval(%q) = %v, then %v, %v", expr, v, again, err)
		}
		s := Format(v)
		back, err := Eval(s)
		if err != nil || Format(back) != s {
			t.Fatalf("Eval(Format(%v)) = Eval(%q) = %v, %v; want a value that formats as %q", v, s, back, err, s)
		}
	})
}

// FuzzCalculateArgs feeds arbitrary argument bytes to the tool: it must not
// panic, argument errors must be *tool.ArgError, and a success must carry a
// number.
func FuzzCalculateArgs(f *testing.F) {
	for _, seed := range []string{
		`{"expression":"1+2"}`, `{"expression":"sqrt(-1)"}`, `{"expression":""}`,
		`{}`, `null`, ``, `[]`, `{"expression":1}`, `{"expression":"1","x":2}`,
		`{"expression":"1"} {}`, `{"expression":"\u00d7\u2212"}`, `{"expression":"1e999"}`,
	} {
		f.Add([]byte(seed))
	}
	tl := Tool()
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := tl.Run(context.Background(), tool.Scope{}, json.RawMessage(data))
		if err != nil {
			if tool.IsInfra(err) {
				t.Fatalf("Run(%q) gave an infrastructure error: %v", data, err)
			}
			return
		}
		if _, err := Eval(res.Content); err != nil || res.IsError {
			t.Fatalf("Run(%q) = %+v, want a number", data, res)
		}
	})
}
