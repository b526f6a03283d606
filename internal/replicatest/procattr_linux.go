package replicatest

import (
	"os"
	"syscall"
)

// procAttr puts a child in a process group of its own, so that Kill
// reaches what it started too, and has the kernel kill it when the test
// binary dies (a timeout's panic, a ^C), so that no replica outlives its
// test.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group.
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
