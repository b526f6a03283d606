// Package sandbox is the contract shared by the levels that run
// model-written code for run_code: a [Job] (the code, up to three inputs,
// an optional [Workspace] and [Limits]) goes to a [Runner], which returns
// a [Result].
//
// A Runner reports everything the script did, including its own errors,
// a limit it hit or its being stopped, in the Result; its Go error is kept
// for failures of the runner itself (and for a cancelled context). So a
// tool built on it hands Result to the model and treats the error as an
// infrastructure failure.
//
// Package sandbox/js is the in-process level: JavaScript in a pure-Go
// interpreter that has no I/O but the Workspace it is handed.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a Job, checked by [Job.Validate].
const (
	MaxCodeBytes   = 64 << 10 // source of one script
	MaxInputs      = 3        // inputs of one job, as read_tool_result's refs
	MaxInputBytes  = 1 << 20  // content of one input
	MaxInputName   = 128      // bytes of an input's name
	MaxOutputBytes = 1 << 20  // hard maximum of Limits.OutputBytes
	// MaxWriteBytes bounds one text a script writes to the workspace, so
	// no larger string is copied out of the interpreter (the Workspace's
	// own quota is usually smaller).
	MaxWriteBytes = 8 << 20
)

// Defaults of the zero fields of [Limits].
const (
	DefaultWall        = 10 * time.Second
	DefaultMemoryBytes = 64 << 20 // 64 MiB
	DefaultOutputBytes = 64 << 10 // 64 KiB
)

// Hard maxima (and minima) of [Limits]: a job asking for more is refused,
// so a misconfigured caller finds out instead of silently getting less.
const (
	MaxWall        = 60 * time.Second
	MaxMemoryBytes = 512 << 20 // 512 MiB
	MinMemoryBytes = 1 << 20   // below this the interpreter cannot start
)

// Job is one run of model-written code.
type Job struct {
	// Code is the script's source, at most MaxCodeBytes of UTF-8.
	Code string
	// Inputs are handed to the script by name (in JavaScript, the inputs
	// object), at most MaxInputs of them, names unique.
	Inputs []Input
	// Workspace is the only file access the script gets; nil means none.
	Workspace Workspace
	// Limits bound the run; zero fields mean their defaults.
	Limits Limits
}

// Input is a named text handed to the script, such as a stored tool
// result. Name is 1 to MaxInputName bytes of UTF-8 without control
// characters;
// Content is at most MaxInputBytes of UTF-8.
type Input struct{ Name, Content string }

// Workspace is the file access a script gets, implemented by the tool
// layer over the turn's confined workspace (which also applies its
// quotas). A Runner checks every path before calling it: relative, no ".."
// that leaves the folder, no control character (see [CheckPath]). Its
// errors reach the script as exceptions, so their messages are written for
// the model. A Runner calls it from one goroutine at a time.
type Workspace interface {
	// ReadFile returns the content of the file at path.
	ReadFile(path string) ([]byte, error)
	// WriteFile creates or replaces the file at path.
	WriteFile(path string, data []byte) error
	// ListFiles returns the names in folder dir ("." is the workspace).
	ListFiles(dir string) ([]string, error)
}

// Limits bound one run. The zero value of each field means its default.
// There is no CPU-time or process-count field: each level states how it
// bounds those (the in-process level has no processes, and its CPU time
// is bounded by Wall).
type Limits struct {
	// Wall bounds the run's duration, at most MaxWall; zero means
	// DefaultWall (10 s).
	Wall time.Duration
	// MemoryBytes bounds the memory the script's interpreter allocates,
	// MinMemoryBytes to MaxMemoryBytes; zero means DefaultMemoryBytes.
	MemoryBytes int64
	// OutputBytes bounds what the script prints, at most MaxOutputBytes;
	// zero means DefaultOutputBytes. A script printing past it is stopped
	// and its output kept up to the limit.
	OutputBytes int
}

// WithDefaults returns l with every zero field replaced by its default.
func (l Limits) WithDefaults() Limits {
	if l.Wall == 0 {
		l.Wall = DefaultWall
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = DefaultOutputBytes
	}
	return l
}

// validate refuses a limit out of its range; l has its defaults.
func (l Limits) validate() error {
	switch {
	case l.Wall < 0 || l.Wall > MaxWall:
		return fmt.Errorf("wall limit %v is out of range (0 to %v)", l.Wall, MaxWall)
	case l.MemoryBytes < MinMemoryBytes || l.MemoryBytes > MaxMemoryBytes:
		return fmt.Errorf("memory limit %d bytes is out of range (%d to %d)", l.MemoryBytes, MinMemoryBytes, MaxMemoryBytes)
	case l.OutputBytes < 0 || l.OutputBytes > MaxOutputBytes:
		return fmt.Errorf("output limit %d bytes is out of range (0 to %d)", l.OutputBytes, MaxOutputBytes)
	}
	return nil
}

// Validate reports the first thing wrong with j as one error prefixed
// "sandbox: ": code or an input too large or not UTF-8, too many inputs, a
// bad or repeated input name, a limit out of range. Runners call it before
// running anything.
func (j Job) Validate() error {
	if err := j.validate(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

func (j Job) validate() error {
	switch {
	case len(j.Code) > MaxCodeBytes:
		return fmt.Errorf("code is %d bytes; the limit is %d", len(j.Code), MaxCodeBytes)
	case !utf8.ValidString(j.Code):
		return errors.New("code is not valid UTF-8")
	case len(j.Inputs) > MaxInputs:
		return fmt.Errorf("%d inputs; the limit is %d", len(j.Inputs), MaxInputs)
	}
	seen := make(map[string]bool, len(j.Inputs))
	for _, in := range j.Inputs {
		if err := in.validate(); err != nil {
			return err
		}
		if seen[in.Name] {
			return fmt.Errorf("input %q is given twice", in.Name)
		}
		seen[in.Name] = true
	}
	return j.Limits.WithDefaults().validate()
}

func (in Input) validate() error {
	switch {
	case in.Name == "" || len(in.Name) > MaxInputName:
		return fmt.Errorf("input name %q must be 1 to %d bytes", in.Name, MaxInputName)
	case !utf8.ValidString(in.Name) || strings.ContainsFunc(in.Name, unicode.IsControl):
		return fmt.Errorf("input name %q holds a control character or invalid UTF-8", in.Name)
	case len(in.Content) > MaxInputBytes:
		return fmt.Errorf("input %q is %d bytes; the limit is %d", in.Name, len(in.Content), MaxInputBytes)
	case !utf8.ValidString(in.Content):
		return fmt.Errorf("input %q is not valid UTF-8", in.Name)
	}
	return nil
}

// Stop says why a run ended before the script finished.
type Stop string

// The reasons a run is stopped.
const (
	StopNone      Stop = ""          // the script finished, or threw
	StopWall      Stop = "wall"      // it ran past Limits.Wall
	StopMemory    Stop = "memory"    // it allocated past Limits.MemoryBytes
	StopOutput    Stop = "output"    // it printed past Limits.OutputBytes
	StopCancelled Stop = "cancelled" // the caller's context ended
	// StopCPU: it used more CPU time than its level allows (a level with
	// processes, whose CPU time is not bounded by the wall limit alone).
	StopCPU Stop = "cpu"
)

// Result is what a run produced.
type Result struct {
	// Stdout is what the script printed, at most Limits.OutputBytes
	// (cut at a character boundary).
	Stdout string
	// Truncated reports that the script printed more than Stdout holds.
	Truncated bool
	// Error is empty when the script finished; otherwise it says, for the
	// model, what the script threw or why it was stopped.
	Error string
	// Stop is why the run was stopped, StopNone when it was not.
	Stop Stop
	// Elapsed is how long the run took.
	Elapsed time.Duration
}

// Runner runs jobs. Implementations are safe for concurrent use.
type Runner interface {
	// Run validates job, runs it and returns its Result. The error is
	// non-nil for an invalid job, a failure of the runner itself, or when
	// ctx ended (then Result holds what the script did until then).
	Run(ctx context.Context, job Job) (Result, error)
}
