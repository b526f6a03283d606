package python_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quiverhq/quiver/sandbox"
	"github.com/quiverhq/quiver/sandbox/python"
)

// newRunner returns a Runner, skipping the test when bubblewrap cannot
// start a sandbox on this machine, or failing it when
// QUIVER_REQUIRE_PEERS=1 (scripts/test sets it, and installs bubblewrap).
func newRunner(t testing.TB, cfg python.Config) *python.Runner {
	t.Helper()
	r, err := python.New(context.Background(), cfg)
	if err != nil {
		if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
			t.Fatalf("the Python sandbox cannot run and QUIVER_REQUIRE_PEERS=1: %v", err)
		}
		t.Skipf("the Python sandbox cannot run here: %v", err)
	}
	return r
}

func run(t testing.TB, r *python.Runner, job sandbox.Job) sandbox.Result {
	t.Helper()
	res, err := r.Run(context.Background(), job)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// fakeWorkspace is a Workspace in memory, recording calls.
type fakeWorkspace struct {
	mu       sync.Mutex
	files    map[string]string
	maxBytes int
}

func newFake(files map[string]string) *fakeWorkspace {
	if files == nil {
		files = map[string]string{}
	}
	return &fakeWorkspace{files: files}
}

func (w *fakeWorkspace) ReadFile(p string) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.files[p]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return []byte(s), nil
}

func (w *fakeWorkspace) WriteFile(p string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.maxBytes > 0 && len(data) > w.maxBytes {
		return fmt.Errorf("per-file quota: %s would be %d bytes; the limit is %d bytes", p, len(data), w.maxBytes)
	}
	w.files[p] = string(data)
	return nil
}

func (w *fakeWorkspace) ListFiles(dir string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var names []string
	for name := range w.files {
		if dir == "." || strings.HasPrefix(name, dir+"/") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

func TestRunResults(t *testing.T) {
	r := newRunner(t, python.Config{})
	tests := []struct {
		name  string
		job   sandbox.Job
		out   string
		error string
	}{
		{"print", sandbox.Job{Code: "print('hi', 1 + 2)"}, "hi 3\n", ""},
		{"stderr joins stdout", sandbox.Job{Code: "import sys; print('a'); print('b', file=sys.stderr)"}, "a\nb\n", ""},
		{"inputs by name", sandbox.Job{Code: "print(sorted(inputs), inputs['res_a'].upper())",
			Inputs: []sandbox.Input{{Name: "res_a", Content: "abc"}, {Name: "res_b", Content: "x"}}}, "['res_a', 'res_b'] ABC\n", ""},
		{"exception", sandbox.Job{Code: "print('before')\nraise ValueError('boom')"}, "before\n",
			"Traceback (most recent call last):\n  File \"<script>\", line 2, in <module>\nValueError: boom\n"},
		{"exit status", sandbox.Job{Code: "import sys; sys.exit(3)"}, "", "the script exited with status 3"},
		{"exit 0", sandbox.Job{Code: "import sys; print('x'); sys.exit(0)"}, "x\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, r, tt.job)
			if res.Stdout != tt.out || res.Error != tt.error || res.Stop != sandbox.StopNone {
				t.Errorf("Result = %+v; want stdout %q, error %q", res, tt.out, tt.error)
			}
		})
	}
}

func TestWorkspaceRoundTrip(t *testing.T) {
	r := newRunner(t, python.Config{})
	ws := newFake(map[string]string{"data/in.csv": "a,b\n1,2\n3,4\n", "keep.txt": "old", "gone.txt": "g"})
	ws.maxBytes = 1000
	code := `
import csv, os
rows = list(csv.DictReader(open('data/in.csv')))
os.makedirs('out', exist_ok=True)
open('out/sum.txt', 'w').write(str(sum(int(r['a']) + int(r['b']) for r in rows)))
open('keep.txt', 'w').write('old')          # unchanged: not written back
os.remove('gone.txt')                        # not deleted from the workspace
open('big.txt', 'w').write('x' * 1001)       # over the workspace's quota
os.symlink('/etc/passwd', 'link.txt')        # a link: never written back
print(sorted(os.listdir('.')))
`
	res := run(t, r, sandbox.Job{Code: code, Workspace: ws})
	if want := "['big.txt', 'data', 'keep.txt', 'link.txt', 'out']\n"; res.Stdout != want {
		t.Errorf("stdout = %q; want %q", res.Stdout, want)
	}
	if want := "not saved to the workspace: per-file quota: big.txt would be 1001 bytes; the limit is 1000 bytes"; res.Error != want {
		t.Errorf("error = %q; want %q", res.Error, want)
	}
	want := map[string]string{"data/in.csv": "a,b\n1,2\n3,4\n", "keep.txt": "old", "gone.txt": "g", "out/sum.txt": "10"}
	if !mapsEqual(ws.files, want) {
		t.Errorf("workspace = %q; want %q", ws.files, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWorkspaceTooLargeToCopy(t *testing.T) {
	r := newRunner(t, python.Config{CopyBytes: 10})
	ws := newFake(map[string]string{"a.txt": strings.Repeat("a", 11)})
	res := run(t, r, sandbox.Job{Code: "print('ran')", Workspace: ws})
	if res.Stdout != "" || !strings.Contains(res.Error, "the workspace holds more than") {
		t.Errorf("Result = %+v; want the copy refused", res)
	}
}

func TestChart(t *testing.T) {
	r := newRunner(t, python.Config{})
	probe := run(t, r, sandbox.Job{Code: "import matplotlib, numpy, pandas"})
	if probe.Error != "" {
		if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
			t.Fatalf("matplotlib, numpy or pandas missing (Debian python3-matplotlib python3-numpy python3-pandas) and QUIVER_REQUIRE_PEERS=1: %s", probe.Error)
		}
		t.Skipf("matplotlib, numpy or pandas missing: %s", probe.Error)
	}
	ws := newFake(map[string]string{"sales.csv": "month,total\nJan,3\nFeb,5\nMar,4\n"})
	code := `
import pandas as pd, matplotlib.pyplot as plt
df = pd.read_csv('sales.csv')
df.plot(x='month', y='total', kind='bar')
plt.savefig('chart.png')
print(df['total'].sum())
`
	res := run(t, r, sandbox.Job{Code: code, Workspace: ws})
	if res.Error != "" || res.Stdout != "12\n" {
		t.Fatalf("Result = %+v", res)
	}
	if png := ws.files["chart.png"]; !strings.HasPrefix(png, "\x89PNG\r\n\x1a\n") || len(png) < 1000 {
		t.Errorf("chart.png is %d bytes, not a PNG", len(png))
	}
}

func TestNewReportsWhatIsMissing(t *testing.T) {
	_, err := python.New(context.Background(), python.Config{Bwrap: "quiver-no-such-bwrap"})
	if err == nil || !strings.Contains(err.Error(), "quiver-no-such-bwrap not found (install Debian bubblewrap)") {
		t.Errorf("missing bwrap: %v", err)
	}
	_, err = python.New(context.Background(), python.Config{Python: filepath.Join(t.TempDir(), "python3")})
	if err == nil || !strings.Contains(err.Error(), "not found (install Debian python3)") {
		t.Errorf("missing python: %v", err)
	}
}

func TestInvalidJobRefused(t *testing.T) {
	r := newRunner(t, python.Config{})
	_, err := r.Run(context.Background(), sandbox.Job{Code: strings.Repeat("x", sandbox.MaxCodeBytes+1)})
	if err == nil || !strings.HasPrefix(err.Error(), "sandbox: code is") {
		t.Errorf("Run = %v; want the job refused", err)
	}
}
