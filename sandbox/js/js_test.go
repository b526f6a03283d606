package js_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/js"
)

// fakeWorkspace is an in-memory Workspace that records every call, so a
// test can show a refused path never reached it.
type fakeWorkspace struct {
	files map[string]string
	calls []string
	panic bool
}

func newFake(files map[string]string) *fakeWorkspace {
	if files == nil {
		files = map[string]string{}
	}
	return &fakeWorkspace{files: files}
}

func (w *fakeWorkspace) ReadFile(p string) ([]byte, error) {
	w.calls = append(w.calls, "read "+p)
	if w.panic {
		panic("fake workspace broke")
	}
	s, ok := w.files[p]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return []byte(s), nil
}

func (w *fakeWorkspace) WriteFile(p string, data []byte) error {
	w.calls = append(w.calls, "write "+p)
	w.files[p] = string(data)
	return nil
}

func (w *fakeWorkspace) ListFiles(dir string) ([]string, error) {
	w.calls = append(w.calls, "list "+dir)
	var names []string
	for name := range w.files {
		if dir == "." || strings.HasPrefix(name, dir+"/") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// short is the wall limit of the tests that loop: long enough for any
// script that finishes, short enough to keep the suite quick.
const short = 200 * time.Millisecond

// ignoreElapsed leaves out the one field that changes from run to run.
var ignoreElapsed = cmpopts.IgnoreFields(sandbox.Result{}, "Elapsed")

func run(t *testing.T, job sandbox.Job) sandbox.Result {
	t.Helper()
	res, err := js.Runner{}.Run(context.Background(), job)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestRunResults(t *testing.T) {
	tests := []struct {
		name   string
		code   string
		inputs []sandbox.Input
		want   sandbox.Result
	}{
		{
			name: "compute",
			code: `let s = 0; for (let i = 1; i <= 100; i++) s += i; console.log(s, 2 ** 10, 0.1 + 0.2);`,
			want: sandbox.Result{Stdout: "5050 1024 0.30000000000000004\n"},
		},
		{
			name: "json",
			code: `const o = JSON.parse('{"b":[1,2],"a":"x"}'); o.c = null; console.log(o); console.log(JSON.stringify(o.b.map(x => x * 2)));`,
			want: sandbox.Result{Stdout: `{"b":[1,2],"a":"x","c":null}` + "\n[2,4]\n"},
		},
		{
			name: "values print as console.log would",
			code: `console.log(undefined, null, NaN, true, 10n, "s", [1, "a"], new Error("e")); console.log(); console.info("i"); console.error("e");`,
			want: sandbox.Result{Stdout: "undefined null NaN true 10 s [1,\"a\"] Error: e\n\ni\ne\n"},
		},
		{
			name: "inputs",
			code: `console.log(Object.keys(inputs).sort().join(","), inputs.r1.length, JSON.parse(inputs.r2).n);`,
			inputs: []sandbox.Input{
				{Name: "r1", Content: "héllo"},
				{Name: "r2", Content: `{"n": 7}`},
			},
			want: sandbox.Result{Stdout: "r1,r2 5 7\n"},
		},
		{
			name:   "inputs are frozen",
			code:   `inputs.r1 = "changed"; console.log(inputs.r1);`,
			inputs: []sandbox.Input{{Name: "r1", Content: "kept"}},
			want:   sandbox.Result{Error: "uncaught TypeError: 'r1' is read-only\n    at <anonymous> (<eval>:1:7)"},
		},
		{
			name: "top-level await and async functions",
			code: `async function f(x) { await null; return x * 2; } console.log(await f(21));`,
			want: sandbox.Result{Stdout: "42\n"},
		},
		{
			name: "thrown error with its stack",
			code: "console.log('before');\nthrow new RangeError('bad range');",
			want: sandbox.Result{Stdout: "before\n", Error: "uncaught RangeError: bad range\n    at <anonymous> (<eval>:2:21)"},
		},
		{
			name: "error after an await",
			code: `await null; null.x;`,
			want: sandbox.Result{Error: "uncaught TypeError: cannot read property 'x' of null\n    at <anonymous> (<eval>:1:17)"},
		},
		{
			name: "syntax error",
			code: `let = = 1`,
			want: sandbox.Result{Error: "uncaught SyntaxError: variable name expected\n    at <eval>:1:5"},
		},
		{
			name: "a promise that never settles",
			code: `console.log("waiting"); await new Promise(() => {});`,
			want: sandbox.Result{Stdout: "waiting\n", Error: "the script never finished: its top-level code awaits a promise that nothing settles (there are no timers or I/O to wait for)"},
		},
		{
			name: "deep recursion is a catchable error",
			code: `function f() { return f() + 1; } try { f(); } catch (e) { console.log(e.name, e.message); }`,
			want: sandbox.Result{Stdout: "InternalError stack overflow\n"},
		},
		{
			name: "a huge thrown string is cut",
			code: `throw "x".repeat(1e6);`,
			want: sandbox.Result{Error: "uncaught " + strings.Repeat("x", 4<<10-len("uncaught ")) + "…"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, sandbox.Job{Code: tt.code, Inputs: tt.inputs})
			if diff := cmp.Diff(tt.want, got, ignoreElapsed); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
		})
	}
}
