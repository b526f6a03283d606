package replicatest

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readyTimeout bounds the wait for a process's start-up line: a process
// that neither prints it nor exits in that time is killed and its test
// failed with what it printed, rather than hanging the test binary.
const readyTimeout = 90 * time.Second

// inherited are the variables a child process takes from the test's
// environment: enough to run, the time zone and the clock offset that
// scripts/test moves (internal/clock), and nothing else, so that a real
// provider key or proxy setting in the environment never reaches it.
var inherited = []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "QUIVER_CLOCK_OFFSET"}

// Process is a child process whose standard output and error are read
// line by line: kept for its log, and handed to a watch function that
// finds its start-up lines. It runs in a process group of its own and is
// killed when the test binary dies (Linux), and when its test ends.
type Process struct {
	// Name names the process in logs ("replica-0").
	Name string

	cmd    *exec.Cmd
	log    lineLog
	exited chan struct{}
	code   int
}

// lineLog is what a process printed, safe for concurrent use.
type lineLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(line)
	l.b.WriteByte('\n')
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProcess starts bin with args and exactly env. watch, when not
// nil, is called with each line of the process's stderr, and watchOut
// with each line of its stdout. Both go to the log, stdout's only when
// watchOut is nil (a writer's acknowledgements would flood it). The
// process is killed when tb ends, and its log written to tb's output when
// tb failed.
func startProcess(tb testing.TB, name, bin string, args, env []string, watch, watchOut func(string)) *Process {
	tb.Helper()
	p := &Process{Name: name, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.SysProcAttr = procAttr()
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		tb.Fatalf("replicatest: %s: %v", name, err)
	}
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("replicatest: %s: %v", name, err)
	}
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("replicatest: start %s: %v", name, err)
	}
	var readers sync.WaitGroup
	readers.Go(func() { p.read(errPipe, watch, true) })
	readers.Go(func() { p.read(outPipe, watchOut, watchOut == nil) })
	go func() {
		readers.Wait() // Wait closes the pipes: read them to the end first
		err := p.cmd.Wait()
		p.code = exitCode(p.cmd.ProcessState, err)
		close(p.exited)
	}()
	tb.Cleanup(func() {
		p.Kill()
		if tb.Failed() {
			tb.Logf("replicatest: %s (%s) printed:\n%s", name, strings.Join(args, " "), p.Log())
		}
	})
	return p
}

// read hands each line of r to watch, and to the log when log is set.
func (p *Process) read(r io.Reader, watch func(string), log bool) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = strings.TrimSuffix(line, "\n")
			if log {
				p.log.add(line)
			}
			if watch != nil {
				watch(line)
			}
		}
		if err != nil {
			return
		}
	}
}

// exitCode is the process's exit status, or -1 when a signal ended it.
func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return -1
		}
		return 0
	}
	return ps.ExitCode()
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Log is everything the process printed so far, stdout and stderr.
func (p *Process) Log() string { return p.log.String() }

// Exited is closed once the process has exited and its output was read.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Wait waits for the process to exit and returns its exit status (-1
// when a signal ended it).
func (p *Process) Wait() int {
	<-p.exited
	return p.code
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM (a graceful stop: quiver serve lets running turns
// finish within its --grace) and returns the exit status.
func (p *Process) Stop() int {
	if p.Running() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	return p.Wait()
}

// Kill sends SIGKILL to the process's group (the process and any child
// it started) and waits for it to exit: a crash, with no chance to
// finish anything. It is a no-op on a process that exited.
func (p *Process) Kill() {
	if p.Running() {
		killGroup(p.cmd.Process)
	}
	p.Wait()
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
	case <-p.exited:
		select {
		case <-ready: // printed it, then exited
			return nil
		default:
		}
		return fmt.Errorf("%s exited with status %d before %s; it printed:\n%s", p.Name, p.code, what, p.Log())
	case <-timer.C:
		p.Kill()
		return fmt.Errorf("%s printed no %s in %s; it printed:\n%s", p.Name, what, readyTimeout, p.Log())
	}
}

// childEnv is the inherited part of the test's environment plus vars.
func childEnv(vars map[string]string) []string {
	var env []string
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			if _, override := vars[k]; !override {
				env = append(env, k+"="+v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return env
}
