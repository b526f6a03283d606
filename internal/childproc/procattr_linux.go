package childproc

import (
	"os"
	"syscall"
)

// SysProcAttr puts a child in a process group of its own, so that Kill
// reaches what it started too, and has the kernel kill it when its
// parent dies (a test binary's timeout panic, a ^C, quiver bench
// killed), so that no child outlives the process that started it. Give
// it to a command run without Start too.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to p's process group.
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}
