package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/quiverhq/quiver/internal/clock"
)

// Version is Quiver's version, as servers and clients it talks to see it.
const Version = "0.1.0-dev"

// Env is what a command runs with. Zero fields mean: Stdin = os.Stdin,
// Stdout and Stderr discard, Now = clock.Now, Getenv = os.Getenv, Logger
// discards.
type Env struct {
	// Stdin is read by commands that take input.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Now            func() time.Time
	Getenv         func(string) string
	Logger         *slog.Logger
}

// WithDefaults is e with every zero field set to its default (see Env).
func (e Env) WithDefaults() Env {
	e.defaults()
	return e
}

func (e *Env) defaults() {
	if e.Now == nil {
		e.Now = clock.Now
	}
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Stdin == nil {
		e.Stdin = os.Stdin
	}
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
}

// UsageError is bad input from the command line or a file it names. The CLI
// prints it on one line and exits with status 2, having written nothing.
type UsageError struct{ Msg string }

// Error returns Msg.
func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ErrReported is a command's failure that its output already shows: a
// tool call's error result, an agent's allowlist warnings, a probe step
// that failed. The CLI exits with status 1 and prints nothing more.
var ErrReported = errors.New("command failed; its output says why")
