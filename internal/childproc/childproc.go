// Package childproc runs the child processes that quiver bench
// (internal/bench) and the replica tests (internal/replicatest) start
// from the quiver binary: each in a process group of its own that the
// kernel kills when its parent dies (Linux), with an environment of a few
// inherited variables and the ones given, and its output read line by
// line, into a log and to the caller's watch functions.
package childproc

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
)

// inherited are the variables a child takes from this process's
// environment: enough to run, the time zone and the clock offset that
// scripts/test moves (internal/clock), and nothing else, so that a real
// provider key or proxy setting in the environment never reaches it.
var inherited = []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "QUIVER_CLOCK_OFFSET"}

// Env is a child's environment: the inherited variables of this
// process's (PATH, HOME, TMPDIR, TZ, LANG, LC_ALL, QUIVER_CLOCK_OFFSET)
// that vars does not set, then vars sorted by name.
func Env(vars map[string]string) []string {
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

// Spec is a process to start.
type Spec struct {
	// Bin and Args are the command; Env is its whole environment (Env
	// builds the usual one; nil means an empty one).
	Bin  string
	Args []string
	Env  []string
	// Stderr and Stdout, when not nil, are called with each line the
	// process writes to that stream, on a goroutine of the stream's own.
	Stderr, Stdout func(line string)
	// LogStdout keeps stdout's lines in the log too; stderr's always are.
	LogStdout bool
	// MaxLog caps the log, in bytes: lines past it are not kept. Zero
	// means no cap.
	MaxLog int
}

// Process is a started child. Its methods are safe for concurrent use.
type Process struct {
	cmd    *exec.Cmd
	log    lineLog
	exited chan struct{}
	code   int
}

// Start starts s. The process runs until it exits or is killed (Kill,
// or its parent's death on Linux); Start's caller must end it.
func Start(s Spec) (*Process, error) {
	p := &Process{exited: make(chan struct{}), log: lineLog{max: s.MaxLog}}
	p.cmd = exec.Command(s.Bin, s.Args...)
	p.cmd.Env = s.Env
	if p.cmd.Env == nil {
		p.cmd.Env = []string{}
	}
	p.cmd.SysProcAttr = SysProcAttr()
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Bin, err)
	}
	var readers sync.WaitGroup
	readers.Go(func() { p.read(errPipe, s.Stderr, true) })
	readers.Go(func() { p.read(outPipe, s.Stdout, s.LogStdout) })
	go func() {
		readers.Wait() // Wait closes the pipes: read them to the end first
		err := p.cmd.Wait()
		p.code = ExitCode(p.cmd.ProcessState, err)
		close(p.exited)
	}()
	return p, nil
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

// ExitCode is the exit status of a command that ran (ps, and the error
// its Wait or Run returned), or -1 when a signal ended it.
func ExitCode(ps *os.ProcessState, err error) int {
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

// Log is what the process printed so far (see Spec.LogStdout and MaxLog).
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

// Stop sends SIGTERM (a graceful stop) and returns the exit status.
func (p *Process) Stop() int {
	if p.Running() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	return p.Wait()
}

// Kill sends SIGKILL to the process's group (the process and any child
// it started) and waits for it to exit. It is a no-op on a process that
// exited.
func (p *Process) Kill() {
	if p.Running() {
		killGroup(p.cmd.Process)
	}
	p.Wait()
}

// lineLog is what a process printed, safe for concurrent use; max > 0
// caps it.
type lineLog struct {
	max int
	mu  sync.Mutex
	b   strings.Builder
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.b.Len()+len(line)+1 > l.max {
		return
	}
	l.b.WriteString(line)
	l.b.WriteByte('\n')
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
