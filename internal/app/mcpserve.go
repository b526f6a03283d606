package app

import "context"

// runMCPServe serves an agent's toolset over MCP. (Being written.)
func runMCPServe(ctx context.Context, args []string, env Env) error {
	return usagef("mcp serve: not built yet")
}
