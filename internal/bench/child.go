package bench

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/quiverhq/quiver/internal/childproc"
)

// readyTimeout bounds the wait for a child's start-up line.
const readyTimeout = 60 * time.Second

// maxChildLog caps what is kept of a child's output for error messages.
const maxChildLog = 64 << 10

// child is a process quiver bench started: a Quiver server, the fake
// model, the baseline or the MCP server (internal/childproc: its own
// process group, dead with quiver bench on Linux).
type child struct{ *childproc.Process }

// startChild starts bin with args and exactly env (plus the inherited
// variables, childproc.Env) and waits until one of its output lines
// matches ready; it returns the match's submatches. each, when not nil,
// sees every line from the first. A child that exits first, or prints no
// such line within readyTimeout, is an error quoting what it printed.
func startChild(ctx context.Context, name, bin string, args []string, env map[string]string, ready *regexp.Regexp, each func(string)) (*child, []string, error) {
	found := make(chan []string, 1)
	line := func(l string) {
		if each != nil {
			each(l)
		}
		if m := ready.FindStringSubmatch(l); m != nil {
			select {
			case found <- m:
			default:
			}
		}
	}
	p, err := childproc.Start(childproc.Spec{Bin: bin, Args: args, Env: childproc.Env(env), Stderr: line, Stdout: line, LogStdout: true, MaxLog: maxChildLog})
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{p}
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case m := <-found:
		return c, m, nil
	case <-c.Exited():
		return nil, nil, fmt.Errorf("%s exited before it was ready; it printed:\n%s", name, c.Log())
	case <-timer.C:
	case <-ctx.Done():
	}
	c.Close()
	return nil, nil, fmt.Errorf("%s printed no start-up line; it printed:\n%s", name, c.Log())
}

// Close kills the child's process group and waits for it to exit; it is
// idempotent.
func (c *child) Close() { c.Kill() }
