package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// readyTimeout bounds the wait for a child's start-up line.
const readyTimeout = 60 * time.Second

// inherited are the variables a child takes from this process's
// environment: enough to run, and nothing else, so that a real provider
// key in the environment never reaches it.
var inherited = []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "QUIVER_CLOCK_OFFSET"}

// child is a process quiver bench started: a Quiver server, the fake
// model or the baseline. It runs in a process group of its own and dies
// with quiver bench (Linux).
type child struct {
	name string
	cmd  *exec.Cmd

	mu     sync.Mutex
	log    strings.Builder
	lines  []func(string)
	exited chan struct{}
}

// startChild starts bin with args and exactly env (plus the inherited
// variables) and waits until one of its output lines matches ready; it
// returns the match's submatches. each, when not nil, sees every line
// from the first. A child that exits first, or prints no
// such line within readyTimeout, is an error quoting what it printed.
func startChild(ctx context.Context, name, bin string, args []string, env map[string]string, ready *regexp.Regexp, each func(string)) (*child, []string, error) {
	c := &child{name: name, exited: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			c.cmd.Env = append(c.cmd.Env, k+"="+v)
		}
	}
	for k, v := range env {
		c.cmd.Env = append(c.cmd.Env, k+"="+v)
	}
	c.cmd.SysProcAttr = procAttr()
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	found := make(chan []string, 1)
	if each != nil {
		c.lines = append(c.lines, each)
	}
	c.lines = append(c.lines, func(line string) {
		if m := ready.FindStringSubmatch(line); m != nil {
			select {
			case found <- m:
			default:
			}
		}
	})
	if err := c.cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	var readers sync.WaitGroup
	readers.Go(func() { c.read(stdout) })
	readers.Go(func() { c.read(stderr) })
	go func() {
		readers.Wait()
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case m := <-found:
		return c, m, nil
	case <-c.exited:
		return nil, nil, fmt.Errorf("%s exited before it was ready; it printed:\n%s", name, c.Log())
	case <-timer.C:
	case <-ctx.Done():
	}
	c.Close()
	return nil, nil, fmt.Errorf("%s printed no start-up line; it printed:\n%s", name, c.Log())
}

// read hands each line of r to the watchers and keeps the first 64 KiB
// in the log.
func (c *child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		if c.log.Len() < 64<<10 {
			c.log.WriteString(line + "\n")
		}
		watchers := c.lines
		c.mu.Unlock()
		for _, w := range watchers {
			w(line)
		}
	}
}

// watch calls fn with every line the child prints from now on.
func (c *child) watch(fn func(string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, fn)
}

// Log is what the child printed (its first 64 KiB).
func (c *child) Log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log.String()
}

// Pid is the child's process id.
func (c *child) Pid() int { return c.cmd.Process.Pid }

// Close kills the child's process group and waits for it to exit; it is
// idempotent.
func (c *child) Close() {
	select {
	case <-c.exited:
		return
	default:
	}
	killGroup(c.cmd.Process)
	<-c.exited
}
