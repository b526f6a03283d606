// Command quiver is Quiver's command-line interface. All logic lives in
// internal/app; see "quiver help".
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"

	"github.com/quiverhq/quiver/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	code := app.Main(ctx, os.Args[1:], app.Env{Stdout: os.Stdout, Stderr: os.Stderr, Logger: logger})
	stop()
	os.Exit(code)
}
