//go:build !linux

package replicatest

import (
	"os"
	"syscall"
)

// procAttr is the default: without Linux's parent-death signal a child
// is ended by its test's cleanup only.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p (its children, if any, are not reached).
func killGroup(p *os.Process) { _ = p.Kill() }
