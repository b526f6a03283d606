package replicatest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/internal/childproc"
)

// readyTimeout bounds the wait for a process's start-up line: a process
// that neither prints it nor exits in that time is killed and its test
// failed with what it printed, rather than hanging the test binary.
const readyTimeout = 90 * time.Second

// Process is a child process a test started (internal/childproc: its
// own process group, killed when the test binary dies on Linux, its
// output read line by line into a log), killed when its test ends.
type Process struct {
	// Name names the process in logs ("replica-0").
	Name string
	*childproc.Process
}

// startProcess starts bin with args and exactly env (childproc.Env).
// watch, when not nil, is called with each line of the process's stderr,
// and watchOut with each line of its stdout. Both go to the log, stdout's
// only when watchOut is nil (a writer's acknowledgements would flood it).
// The process is killed when tb ends, and its log written to tb's output
// when tb failed.
func startProcess(tb testing.TB, name, bin string, args, env []string, watch, watchOut func(string)) *Process {
	tb.Helper()
	cp, err := childproc.Start(childproc.Spec{Bin: bin, Args: args, Env: env, Stderr: watch, Stdout: watchOut, LogStdout: watchOut == nil})
	if err != nil {
		tb.Fatalf("replicatest: %s: %v", name, err)
	}
	p := &Process{Name: name, Process: cp}
	tb.Cleanup(func() {
		p.Kill()
		if tb.Failed() {
			tb.Logf("replicatest: %s (%s) printed:\n%s", name, strings.Join(args, " "), p.Log())
		}
	})
	return p
}

// waitFor waits until ready is closed, the process exits, or
// readyTimeout passes. It returns an error saying which, with the log,
// when ready was not reached.
func (p *Process) waitFor(ready <-chan struct{}, what string) error {
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-p.Exited():
		select {
		case <-ready: // printed it, then exited
			return nil
		default:
		}
		return fmt.Errorf("%s exited with status %d before %s; it printed:\n%s", p.Name, p.Wait(), what, p.Log())
	case <-timer.C:
		p.Kill()
		return fmt.Errorf("%s printed no %s in %s; it printed:\n%s", p.Name, what, readyTimeout, p.Log())
	}
}
