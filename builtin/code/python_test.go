package code_test

import (
	"context"
	"os"
	"regexp"
	"testing"

	"github.com/quiverhq/quiver/builtin/code"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/sandbox/python"
)

// pythonRunner is the Python level, or a skip where bubblewrap cannot run
// (a failure under QUIVER_REQUIRE_PEERS=1).
func pythonRunner(t *testing.T) *python.Runner {
	t.Helper()
	r, err := python.New(context.Background(), python.Config{})
	if err != nil {
		if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
			t.Fatalf("the Python sandbox cannot run and QUIVER_REQUIRE_PEERS=1: %v", err)
		}
		t.Skipf("the Python sandbox cannot run here: %v", err)
	}
	return r
}

// At the Python level a chart lands in the real workspace, under its
// quotas, and the result names it with its size and type.
func TestPythonChartInTheWorkspace(t *testing.T) {
	e := newEnv(t, code.Config{Level: code.LevelPython, Runner: pythonRunner(t),
		Workspace: workspace.Config{MaxFileBytes: 200 << 10}})
	got := e.mustCall(map[string]any{"code": `
try:
    import matplotlib.pyplot as plt
except ImportError:
    print('no matplotlib')
    raise SystemExit
plt.plot([int(x) for x in inputs['res_mine'].split(',')])
plt.savefig('chart.png')
open('big.bin', 'wb').write(b'x' * (300 << 10))
print('drawn')`, "inputs": []string{"res_mine"}})
	if got == "Output:\nno matplotlib" {
		if os.Getenv("QUIVER_REQUIRE_PEERS") == "1" {
			t.Fatal("matplotlib missing (Debian python3-matplotlib) and QUIVER_REQUIRE_PEERS=1")
		}
		t.Skip("matplotlib is not installed")
	}
	want := regexp.MustCompile(`^Output:\ndrawn\nError: not saved to the workspace: per-file quota: big.bin would be 307200 bytes; the limit is 204800 bytes\nFiles written to the workspace:\n- chart.png \([0-9.]+ KiB, image/png\)$`)
	if !want.MatchString(got) {
		t.Errorf("result:\n%s\nwant it to match %s", got, want)
	}
	if png := e.file("chart.png"); len(png) < 8 || png[:8] != "\x89PNG\r\n\x1a\n" {
		t.Errorf("chart.png is not a PNG")
	}
}
