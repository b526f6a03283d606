package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/mcpclient"
)

var mcpAddUsage = usageText("mcp-add")

var mcpListUsage = usageText("mcp-list")

var mcpToggleUsage = usageText("mcp-toggle")

var mcpRemoveUsage = usageText("mcp-remove")

// mcpAdmin is what the registration subcommands share.
type mcpAdmin struct {
	org, config, data string
}

func (a *mcpAdmin) flags(fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&a.org, "org", "", "")
	fs.StringVar(&a.config, "config", "", "")
	fs.StringVar(&a.data, "data", "", "")
}

// open loads the configuration and opens the runtime (the store, the
// organisations' settings and the MCP registrations). The caller closes
// the runtime.
func (a *mcpAdmin) open(ctx context.Context, env Env) (rt *runtime, orgID string, err error) {
	o, err := dataFlags{config: a.config, data: a.data}.open(ctx, needRuntime, env)
	if err != nil {
		return nil, "", err
	}
	return o.rt, ids.Slug(a.org, "default"), nil
}

// mcpRefusal turns a registration refusal (mcpclient.Refusal) into bad
// input (exit 2).
func mcpRefusal(err error) error {
	if msg, _, ok := mcpclient.Refusal(err); ok {
		return &UsageError{Msg: msg}
	}
	return err
}

func runMCPAdd(ctx context.Context, args []string, env Env) error {
	fs := newFlags("mcp add")
	var a mcpAdmin
	a.flags(fs)
	var typ, tokenEnv string
	var tokenStdin, asJSON bool
	fs.StringVar(&typ, "type", "general", "")
	fs.StringVar(&tokenEnv, "token-env", "", "")
	fs.BoolVar(&tokenStdin, "token-stdin", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, err := parseArgs(fs, args, mcpAddUsage, env.Stdout, 2, "give NAME and URL")
	if err != nil {
		return err
	}
	token, err := readToken(tokenEnv, tokenStdin, env)
	if err != nil {
		return err
	}
	reg := mcpclient.Registration{Name: pos[0], URL: pos[1], Token: token, Type: typ}
	if err := reg.Validate(); err != nil {
		return usagef("mcp add: %v", err) // before the data folder is touched
	}
	rt, org, err := a.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	rec, err := rt.mcp.regs.AddUnder(ctx, org, rt.orgs, reg)
	if err != nil {
		return mcpRefusal(err)
	}
	if asJSON {
		return writeJSON(env.Stdout, mcpclient.ViewOf(rec))
	}
	fmt.Fprintf(env.Stdout, "added %s (%s, %s): %s\n", rec.Name, rec.Type, mcpclient.Origin(rec.URL), mcpclient.DescribeNames(rec.Name, rec.Tools))
	return nil
}

// readToken reads an auth token from an environment variable or the first
// line of standard input; never from the command line, where other users
// of the machine could read it.
func readToken(envVar string, fromStdin bool, env Env) (string, error) {
	switch {
	case envVar != "" && fromStdin:
		return "", usagef("give --token-env or --token-stdin, not both")
	case envVar != "":
		t := env.Getenv(envVar)
		if t == "" {
			return "", usagef("--token-env: $%s is empty", envVar)
		}
		return t, nil
	case fromStdin:
		line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read token: %w", err)
		}
		if t := strings.TrimSpace(line); t != "" {
			return t, nil
		}
		return "", usagef("--token-stdin: standard input held no token")
	}
	return "", nil
}

func runMCPList(ctx context.Context, args []string, env Env) error {
	fs := newFlags("mcp list")
	var a mcpAdmin
	a.flags(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	if _, err := parseArgs(fs, args, mcpListUsage, env.Stdout, 0, "takes no arguments"); err != nil {
		return err
	}
	rt, org, err := a.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	recs, err := rt.mcp.regs.List(ctx, org)
	if err != nil {
		return err
	}
	views := mcpclient.ViewsOf(recs)
	if asJSON {
		return writeJSON(env.Stdout, views)
	}
	if len(views) == 0 {
		fmt.Fprintf(env.Stdout, "no MCP servers registered for %s\n", org)
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tENABLED\tTOKEN\tURL\tTOOLS")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%s\n", v.Name, v.Type, v.Enabled, v.Token, v.URL, mcpclient.DescribeNames(v.Name, v.Tools))
	}
	return tw.Flush()
}

func runMCPToggle(ctx context.Context, args []string, env Env, enable bool) error {
	name := "mcp disable"
	if enable {
		name = "mcp enable"
	}
	fs := newFlags(name)
	var a mcpAdmin
	a.flags(fs)
	pos, err := parseArgs(fs, args, mcpToggleUsage, env.Stdout, 1, "give one NAME")
	if err != nil {
		return err
	}
	rt, org, err := a.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.mcp.regs.SetEnabled(ctx, org, pos[0], enable); err != nil {
		return mcpRefusal(err)
	}
	fmt.Fprintf(env.Stdout, "%s %sd\n", pos[0], strings.TrimPrefix(name, "mcp "))
	return nil
}

func runMCPRemove(ctx context.Context, args []string, env Env) error {
	fs := newFlags("mcp remove")
	var a mcpAdmin
	a.flags(fs)
	var yes bool
	fs.BoolVar(&yes, "yes", false, "")
	pos, err := parseArgs(fs, args, mcpRemoveUsage, env.Stdout, 1, "give one NAME")
	if err != nil {
		return err
	}
	if !yes {
		return usagef("mcp remove: deleting %s needs --yes", pos[0])
	}
	rt, org, err := a.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.mcp.regs.Remove(ctx, org, pos[0], true); err != nil {
		return mcpRefusal(err)
	}
	fmt.Fprintf(env.Stdout, "%s removed\n", pos[0])
	return nil
}
