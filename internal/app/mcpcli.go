package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/mcpclient"
)

const mcpAdminFlags = `  --org O          organisation the servers belong to (default "default")
  --config FILE    deployment configuration (network.mode, secrets, mcp limits)
  --data DIR       data folder (default $QUIVER_DATA, else $XDG_DATA_HOME/quiver,
                   else ~/.local/share/quiver)
`

const mcpAddUsage = `Usage: quiver mcp add NAME URL [flags]

Registers a remote MCP server, all or nothing: the fields are checked, then
the type and slot rules, then the URL against the network policy; then Quiver
connects (Streamable HTTP, else SSE), discovers the tools, and only then
stores the registration, enabled. The token is stored encrypted and never
shown again.

NAME is 1–32 letters, digits or hyphens. URL is http(s), at most 500
characters; in public network mode only https to public addresses. Agents
name the server's tools as NAME/tool or NAME/*; models call them NAME__tool
(docs/mcp.md, "Tool names").

Flags:
  --type T         general (default), web_search (replaces the built-in
                   web_search) or url_fetcher (replaces fetch_url)
  --token-env VAR  read the auth token from environment variable VAR
  --token-stdin    read the auth token from the first line of standard input
  --json           print the registration as JSON
` + mcpAdminFlags

const mcpListUsage = `Usage: quiver mcp list [flags]

Lists the organisation's registered servers from stored metadata; it never
contacts a server. TOOLS is the last successful discovery, each tool under
the name models call it by (NAME__tool; a tool name that had to be
sanitised or shortened is followed by the server's name for it, quoted):
"Discovery unknown" before one, "None discovered" when it found none.

Flags:
  --json           print JSON
` + mcpAdminFlags

const mcpToggleUsage = `Usage: quiver mcp enable|disable NAME [flags]

Enables or disables a registered server. Disabling closes its connection at
once; enabling a web_search or url_fetcher server fails while another enabled
server has that type.

Flags:
` + mcpAdminFlags

const mcpRemoveUsage = `Usage: quiver mcp remove NAME --yes [flags]

Deletes a registered server, closes its connection and frees its slot.

Flags:
  --yes            confirm the deletion (required)
` + mcpAdminFlags

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
	pos, err := parse(fs, args, mcpAddUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("mcp add: give NAME and URL")
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
		in := env.Stdin
		if in == nil {
			in = os.Stdin
		}
		line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
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
	pos, err := parse(fs, args, mcpListUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("mcp list: takes no arguments")
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
	pos, err := parse(fs, args, mcpToggleUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s: give one NAME", name)
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
	pos, err := parse(fs, args, mcpRemoveUsage, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("mcp remove: give one NAME")
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
