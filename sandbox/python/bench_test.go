package python_test

import (
	"context"
	"testing"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/python"
)

func benchmarkRun(b *testing.B, job sandbox.Job, want string) {
	r := newRunner(b, python.Config{})
	for b.Loop() {
		res, err := r.Run(context.Background(), job)
		if err != nil || res.Stdout != want || res.Error != "" {
			b.Fatalf("Run = %+v, %v; want %q", res, err, want)
		}
	}
}

// BenchmarkStart is the cost of a run that does nothing: bwrap, its
// namespaces and mounts, the interpreter's start and the boot script.
func BenchmarkStart(b *testing.B) {
	benchmarkRun(b, sandbox.Job{}, "")
}

// BenchmarkSum is a CPU-bound script: summing a million numbers, as
// sandbox/js's BenchmarkSum does.
func BenchmarkSum(b *testing.B) {
	code := "s = 0\nfor i in range(1000000):\n    s += i\nprint(s)"
	benchmarkRun(b, sandbox.Job{Code: code}, "499999500000\n")
}

// BenchmarkSieve is a naive prime sieve up to a million.
func BenchmarkSieve(b *testing.B) {
	code := "n = 1000000\nis_p = bytearray([1]) * (n + 1)\nis_p[0] = is_p[1] = 0\nfor i in range(2, int(n ** 0.5) + 1):\n    if is_p[i]:\n        is_p[i*i::i] = bytes(len(range(i*i, n + 1, i)))\nprint(sum(is_p))"
	benchmarkRun(b, sandbox.Job{Code: code}, "78498\n")
}
