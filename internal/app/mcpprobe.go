package app

import (
	"context"

	"github.com/quiverhq/quiver/internal/config"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/surface/terminal"
)

// MCPProbeOptions is what "quiver mcp probe" runs with: a server tried
// before it is registered, with no data folder.
type MCPProbeOptions struct {
	// URL is the server's endpoint.
	URL string
	// Token is its auth token ("" for none).
	Token string
	// Calls are the tool calls made after the tools are listed.
	Calls []mcpclient.ProbeCall
	// CallAll calls every listed tool once instead, with arguments made
	// from its input schema.
	CallAll bool
	// SelfHosted probes under the self-hosted network mode, whatever the
	// configuration says.
	SelfHosted bool
	// Config is the configuration file ("" means the defaults).
	Config string
	// JSON prints the report (mcpclient.ProbeReport) instead of its text
	// form.
	JSON bool
}

// MCPProbe connects the server, lists its tools, makes the calls asked
// for and prints the report. A server the network mode refuses is a
// *UsageError; a step that failed is in the report and ErrReported.
func MCPProbe(ctx context.Context, o MCPProbeOptions, env Env) error {
	env.defaults()
	cfg, err := config.LoadConfig(o.Config)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if o.SelfHosted {
		cfg.Network.Mode = "self-hosted"
	}
	pool := mcpPool(cfg, env)
	defer pool.Close()
	conn, err := pool.Probe(ctx, o.URL, o.Token)
	if err != nil {
		return mcpRefusal(err)
	}
	defer conn.Close()
	out := conn.Report(ctx, o.Calls, o.CallAll)
	if err := terminal.Emit(env.Stdout, o.JSON, out); err != nil {
		return err
	}
	if out.Failed() {
		return ErrReported
	}
	return nil
}
