package procstat

import (
	"os"
	"runtime"
	"testing"
)

// TestProcessCPU: this process's own /proc entry reads, after some work,
// as a CPU time no smaller than none; a process that does not exist is an
// error.
func TestProcessCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	d, err := ProcessCPU(os.Getpid())
	if err != nil || d < 0 {
		t.Fatalf("ProcessCPU(self) = %v, %v", d, err)
	}
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Error("ProcessCPU of a pid that does not exist: no error")
	}
	if SelfCPU() <= 0 {
		t.Error("SelfCPU: no CPU used by a running test")
	}
}
