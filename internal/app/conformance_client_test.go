package app_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/nodetools"
)

// buildQuiver builds the quiver binary into a temporary folder.
func buildQuiver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quiver")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/quiver").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestConformanceClient runs the official MCP conformance suite's client
// scenarios against "quiver mcp probe --call-all": the suite starts its
// own test server on loopback and appends its URL to the command.
func TestConformanceClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	x := nodetools.Require(t)
	bin := buildQuiver(t)
	for _, scenario := range []string{"initialize", "tools_call", "sse-retry"} {
		t.Run(scenario, func(t *testing.T) {
			cmd := x.Command(context.Background(), "conformance", "client",
				"--command", bin+" mcp probe --self-hosted --call-all",
				"--scenario", scenario, "-o", t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "OVERALL: PASSED") {
				t.Fatalf("scenario %s failed (%v):\n%s", scenario, err, out)
			}
		})
	}
}
