package app

import (
	"context"
	"fmt"
)

const mcpUsage = `Usage:
  quiver mcp add NAME URL [flags]      register a remote MCP server (connects and discovers first)
  quiver mcp list [flags]              list registered servers (never contacts them)
  quiver mcp enable NAME [flags]       enable a server
  quiver mcp disable NAME [flags]      disable a server
  quiver mcp remove NAME --yes [flags] delete a server and free its slot
  quiver mcp probe URL [flags]         connect to a server, print its identity and tools
  quiver mcp serve --agent FILE (--stdio | --http ADDR)
                                       serve an agent's toolset as an MCP server

Run "quiver mcp COMMAND --help" for a command's flags.
`

// runMCP dispatches the "quiver mcp" subcommands.
func runMCP(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usagef(`mcp: no subcommand given (run "quiver mcp --help")`)
	}
	switch args[0] {
	case "serve":
		return runMCPServe(ctx, args[1:], env)
	case "add":
		return runMCPAdd(ctx, args[1:], env)
	case "list":
		return runMCPList(ctx, args[1:], env)
	case "enable":
		return runMCPToggle(ctx, args[1:], env, true)
	case "disable":
		return runMCPToggle(ctx, args[1:], env, false)
	case "remove":
		return runMCPRemove(ctx, args[1:], env)
	case "probe":
		return runMCPProbe(ctx, args[1:], env)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(env.Stdout, mcpUsage)
		return nil
	}
	return usagef("mcp: unknown subcommand %q (add, list, enable, disable, remove, probe, serve)", args[0])
}
