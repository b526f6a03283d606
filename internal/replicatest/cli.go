package replicatest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/quiverhq/quiver/internal/childproc"
)

// runTimeout bounds one CLI command: one that hangs is killed and fails
// its test instead of the test binary's deadline.
const runTimeout = 2 * time.Minute

// Result is how a CLI command ended.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs quiver with args in the cluster's environment (Env) and
// returns how it ended. Commands that read the configuration need
// "--config", c.ConfigFile among args.
func (c *Cluster) Run(args ...string) Result {
	c.tb.Helper()
	return c.RunWith(nil, "", args...)
}

// RunWith is Run with more environment variables and a standard input.
func (c *Cluster) RunWith(env map[string]string, stdin string, args ...string) Result {
	c.tb.Helper()
	vars := c.Env()
	for k, v := range env {
		vars[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, args...)
	cmd.Env = childproc.Env(vars)
	cmd.SysProcAttr = childproc.SysProcAttr()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		c.tb.Fatalf("replicatest: quiver %s did not end in %s:\n%s%s", strings.Join(args, " "), runTimeout, out.String(), errb.String())
	}
	return Result{Code: childproc.ExitCode(cmd.ProcessState, err), Stdout: out.String(), Stderr: errb.String()}
}

// LoginLink issues user of org a one-time login link with "quiver
// login-link", pointing at r, and returns it.
func (c *Cluster) LoginLink(r *Replica, user, org string) string {
	c.tb.Helper()
	res := c.Run("login-link", "--config", c.ConfigFile, "--user", user, "--org", org, "--addr", r.Addr)
	if res.Code != 0 {
		c.tb.Fatalf("replicatest: login-link: exit %d: %s", res.Code, res.Stderr)
	}
	return strings.TrimSpace(res.Stdout)
}

var mcpServingRe = regexp.MustCompile(`quiver: serving MCP at (http://\S+)`)

// StartMCPServer runs "quiver mcp serve --http 127.0.0.1:0" for the
// agent defined by agentYAML, on a data folder of its own (not the
// cluster's), and returns its endpoint URL once it serves. It ends with
// the test.
func (c *Cluster) StartMCPServer(agentYAML string) string {
	c.tb.Helper()
	dir := c.tb.TempDir()
	agent := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(agent, []byte(agentYAML), 0o600); err != nil {
		c.tb.Fatalf("replicatest: write the MCP server's agent: %v", err)
	}
	var endpoint string
	ready := make(chan struct{})
	var once sync.Once
	watch := func(line string) {
		if m := mcpServingRe.FindStringSubmatch(line); m != nil {
			once.Do(func() { endpoint = m[1]; close(ready) })
		}
	}
	vars := map[string]string{"QUIVER_DATA": filepath.Join(dir, "data")}
	p := startProcess(c.tb, "mcp-server", c.Bin, []string{"mcp", "serve", "--agent", agent, "--http", "127.0.0.1:0"}, childproc.Env(vars), watch, nil)
	if err := p.waitFor(ready, "MCP endpoint line"); err != nil {
		c.tb.Fatalf("replicatest: %v", err)
	}
	return endpoint
}
