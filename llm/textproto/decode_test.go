package textproto

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		cut, ok        bool
	}{
		{"valid", `{"a": [1, {"b": "}"}]}`, `{"a": [1, {"b": "}"}]}`, false, true},
		{"text around", "```json\n{\"a\":1}\n```", `{"a":1}`, false, true},
		{"second object ignored", `{"a":1} {"b":2}`, `{"a":1}`, false, true},
		{"trailing commas", "{\"a\": [1, 2,\n], \"b\": {},\t}", `{"a": [1, 2], "b": {}}`, false, true},
		{"control characters", "{\"a\": \"x\ty\r\n\"}", `{"a": "x\u0009y\u000d\u000a"}`, false, true},
		{"cut in a string", `{"a": ["x", "yz`, `{"a": ["x", "yz"]}`, true, true},
		{"cut in an escape", `{"a": "x\`, `{"a": "x"}`, true, true},
		{"cut in a unicode escape", `{"a": "x\u12`, `{"a": "x"}`, true, true},
		{"cut after an escaped quote", `{"a": "x\"`, `{"a": "x\""}`, true, true},
		{"cut after a value", `{"a": 1, "b": [true,`, `{"a": 1, "b": [true]}`, false, true},
		{"cut after a key", `{"a": 1, "b":`, ``, false, false},
		{"cut in a key", `{"a": 1, "b`, ``, true, false},
		{"mismatched bracket", `{"a": [1}`, ``, false, false},
		{"no object", `["a"]`, ``, false, false},
		{"empty", ``, ``, false, false},
		{"single quotes", `{'a': 1}`, ``, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut, ok := repair([]byte(tc.in), "")
			if ok != tc.ok || cut != tc.cut {
				t.Fatalf("repair(%q) = %q, cut %v, ok %v; want cut %v, ok %v", tc.in, got, cut, ok, tc.cut, tc.ok)
			}
			if ok {
				if diff := cmp.Diff(tc.want, string(got)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestArgsValue(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`{ "a" : 1 }`, `{"a":1}`, true},
		{`null`, `{}`, true},
		{`""`, `{}`, true},
		{`"{\"a\": [1,],}"`, `{"a":[1]}`, true},
		{`"` + "```json\\n{\\\"a\\\": 1}\\n```" + `"`, `{"a":1}`, true},
		{`"not json"`, ``, false},
		{`"[1]"`, ``, false},
		{`[1]`, ``, false},
		{`42`, ``, false},
	} {
		got, ok := argsValue([]byte(tc.in))
		if ok != tc.ok || (ok && string(got) != tc.want) {
			t.Errorf("argsValue(%s) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
