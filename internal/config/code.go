package config

import (
	"fmt"

	"github.com/quiverhq/quiver/sandbox"
)

// Code configures run_code (docs/code.md): which isolation level runs the
// scripts and their limits. The zero value is the in-process JavaScript
// level with the sandbox's default limits.
type Code struct {
	// Level is "js" (the default: JavaScript in the server's process, no
	// I/O but the workspace) or "python" (Python 3 in a separate process
	// under bubblewrap, with numpy, pandas and matplotlib when installed).
	Level string `yaml:"level"`
	// Wall bounds one run; zero means 10s, at most 60s.
	Wall Duration `yaml:"wall"`
	// MemoryBytes bounds the script's memory (the interpreter's heap for
	// js, each process's address space for python); zero means 64 MiB
	// for js and 512 MiB for python, the most allowed.
	MemoryBytes int64 `yaml:"memory_bytes"`
	// OutputBytes bounds what a script prints; zero means 64 KiB, at most
	// 1 MiB.
	OutputBytes int `yaml:"output_bytes"`
	// CPU bounds each process's CPU time at the python level; zero means
	// the wall limit.
	CPU Duration `yaml:"cpu"`
	// Processes bounds the processes and threads of a python script; zero
	// means 32.
	Processes int `yaml:"processes"`
	// Bwrap and Python name the bubblewrap binary and the interpreter of
	// the python level; empty means "bwrap" in PATH and /usr/bin/python3.
	Bwrap  string `yaml:"bwrap"`
	Python string `yaml:"python"`
}

// Limits are the configured limits as the sandbox takes them (zero
// fields mean the level's defaults).
func (c Code) Limits() sandbox.Limits {
	return sandbox.Limits{Wall: c.Wall.Std(), MemoryBytes: c.MemoryBytes, OutputBytes: c.OutputBytes}
}

func (c Code) validate() error {
	switch c.Level {
	case "", "js", "python":
	default:
		return fmt.Errorf("code.level %q: use js or python", c.Level)
	}
	if c.MemoryBytes < 0 {
		return fmt.Errorf("code.memory_bytes %d: cannot be negative", c.MemoryBytes)
	}
	if err := (sandbox.Job{Limits: c.Limits()}).Validate(); err != nil {
		return fmt.Errorf("code: %w", err)
	}
	if c.CPU < 0 || c.CPU.Std() > sandbox.MaxWall {
		return fmt.Errorf("code.cpu %v: use 0 to %v", c.CPU.Std(), sandbox.MaxWall)
	}
	if c.Processes < 0 || c.Processes > 1024 {
		return fmt.Errorf("code.processes %d: use 0 to 1024", c.Processes)
	}
	return nil
}
