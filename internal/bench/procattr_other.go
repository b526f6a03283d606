//go:build !linux

package bench

import (
	"os"
	"syscall"
)

// procAttr is the default elsewhere: children are killed by Close only.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p.
func killGroup(p *os.Process) { _ = p.Kill() }
