//go:build linux

package bench

import (
	"os"
	"syscall"
)

// procAttr puts a child in a process group of its own and has the kernel
// kill it when quiver bench dies, so that no server outlives the run.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group.
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
