package app_test

import (
	"context"
	"os"
	"testing"

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
)

// TestMain lets the test binary stand in for quiver as a child process
// ("quiver __read-pdf"), as production runs its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__read-pdf" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], app.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}
