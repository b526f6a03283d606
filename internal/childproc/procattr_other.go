//go:build !linux

package childproc

import (
	"os"
	"syscall"
)

// SysProcAttr is the default elsewhere: without Linux's parent-death
// signal a child is ended by Kill only.
func SysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p (its children, if any, are not reached).
func killGroup(p *os.Process) { _ = p.Kill() }
