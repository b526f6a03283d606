package js_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/js"
)

func benchmarkRun(b *testing.B, job sandbox.Job, want string) {
	for b.Loop() {
		res, err := js.Runner{}.Run(context.Background(), job)
		if err != nil || res.Stdout != want || res.Error != "" {
			b.Fatalf("Run = %+v, %v; want %q", res, err, want)
		}
	}
}

// BenchmarkStart is the cost of a run that does nothing: a fresh VM, its
// set-up and close.
func BenchmarkStart(b *testing.B) {
	benchmarkRun(b, sandbox.Job{}, "")
}

// BenchmarkSum is a CPU-bound script: summing a million numbers.
func BenchmarkSum(b *testing.B) {
	code := `let s = 0; for (let i = 0; i < 1e6; i++) s += i; console.log(s);`
	benchmarkRun(b, sandbox.Job{Code: code}, "499999500000\n")
}

// BenchmarkInputs reads three 1 MiB inputs, parses one as JSON and writes
// through the workspace.
func BenchmarkInputs(b *testing.B) {
	doc := `{"k":"` + strings.Repeat("x", 1<<20-16) + `"}`
	job := sandbox.Job{
		Code:      `workspace.write('n.txt', String(JSON.parse(inputs.a).k.length + inputs.b.length + inputs.c.length)); console.log('ok');`,
		Inputs:    []sandbox.Input{{Name: "a", Content: doc}, {Name: "b", Content: doc}, {Name: "c", Content: doc}},
		Workspace: newFake(nil),
	}
	benchmarkRun(b, job, "ok\n")
}

// BenchmarkSieve is a naive prime sieve up to a million, as
// sandbox/python's BenchmarkSieve is.
func BenchmarkSieve(b *testing.B) {
	code := `const n = 1e6, p = new Uint8Array(n + 1).fill(1); p[0] = p[1] = 0;
		for (let i = 2; i * i <= n; i++) if (p[i]) for (let j = i * i; j <= n; j += i) p[j] = 0;
		let c = 0; for (let i = 0; i <= n; i++) c += p[i]; console.log(c);`
	benchmarkRun(b, sandbox.Job{Code: code}, "78498\n")
}
