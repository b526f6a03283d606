// Command quiver is Quiver's command-line interface: internal/cli parses
// the command line and runs internal/app's commands; see "quiver help".
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // zone names work on hosts without /usr/share/zoneinfo

	"github.com/quiverhq/quiver/internal/app"
	"github.com/quiverhq/quiver/internal/cli"
)

func main() {
	// SIGTERM too: service managers stop servers with it, and in-flight
	// calls deserve their answer.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	code := cli.Main(ctx, os.Args[1:], app.Env{Stdout: os.Stdout, Stderr: os.Stderr, Logger: logger})
	stop()
	os.Exit(code)
}
