package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/ids"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/surface/terminal"
)

// MCPAdmin is what the MCP registration commands share: whose
// registrations, in which deployment.
type MCPAdmin struct {
	// Org is the organisation ("" is the default one).
	Org string
	// Data is the configuration and the data folder.
	Data Data
}

// open loads the configuration and opens the runtime (the store, the
// organisations' settings and the MCP registrations). The caller closes
// the runtime.
func (a MCPAdmin) open(ctx context.Context, env Env) (rt *runtime, orgID string, err error) {
	o, err := a.Data.flags().open(ctx, needRuntime, env)
	if err != nil {
		return nil, "", err
	}
	return o.rt, ids.Slug(a.Org, "default"), nil
}

// mcpRefusal turns a registration refusal (mcpclient.Refusal) into bad
// input (exit 2).
func mcpRefusal(err error) error {
	if msg, _, ok := mcpclient.Refusal(err); ok {
		return &UsageError{Msg: msg}
	}
	return err
}

// MCPAddOptions is what "quiver mcp add" runs with.
type MCPAddOptions struct {
	MCPAdmin
	// Name and URL name the server and where it answers.
	Name, URL string
	// Type is the server's type (mcpclient.Registration.Type).
	Type string
	// Token is the server's auth token ("" for none), sealed at rest.
	Token string
	// JSON prints the registration's view (mcpclient.View) instead of a
	// line of text.
	JSON bool
}

// MCPAdd validates the registration before the data folder is touched,
// then connects the server under the organisation's network mode,
// discovers its tools and stores it. A refusal is a *UsageError.
func MCPAdd(ctx context.Context, o MCPAddOptions, env Env) error {
	env.defaults()
	reg := mcpclient.Registration{Name: o.Name, URL: o.URL, Token: o.Token, Type: o.Type}
	if err := reg.Validate(); err != nil {
		return usagef("mcp add: %v", err) // before the data folder is touched
	}
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	rec, err := rt.mcp.regs.AddUnder(ctx, org, rt.orgs, reg)
	if err != nil {
		return mcpRefusal(err)
	}
	if o.JSON {
		return terminal.WriteJSON(env.Stdout, mcpclient.ViewOf(rec))
	}
	fmt.Fprintf(env.Stdout, "added %s (%s, %s): %s\n", rec.Name, rec.Type, mcpclient.Origin(rec.URL), mcpclient.DescribeNames(rec.Name, rec.Tools))
	return nil
}

// MCPListOptions is what "quiver mcp list" runs with.
type MCPListOptions struct {
	MCPAdmin
	// JSON prints the registrations' views (mcpclient.View) instead of a
	// table.
	JSON bool
}

// MCPList prints the organisation's registered servers.
func MCPList(ctx context.Context, o MCPListOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	recs, err := rt.mcp.regs.List(ctx, org)
	if err != nil {
		return err
	}
	views := mcpclient.ViewsOf(recs)
	if o.JSON {
		return terminal.WriteJSON(env.Stdout, views)
	}
	return mcpclient.WriteViews(env.Stdout, org, views)
}

// MCPToggleOptions is what "quiver mcp enable" and "disable" run with.
type MCPToggleOptions struct {
	MCPAdmin
	// Name is the server's.
	Name string
	// Enable enables the server; false disables it.
	Enable bool
}

// MCPToggle enables or disables a registered server; one not registered
// is a *UsageError.
func MCPToggle(ctx context.Context, o MCPToggleOptions, env Env) error {
	env.defaults()
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.mcp.regs.SetEnabled(ctx, org, o.Name, o.Enable); err != nil {
		return mcpRefusal(err)
	}
	verb := "disabled"
	if o.Enable {
		verb = "enabled"
	}
	fmt.Fprintf(env.Stdout, "%s %s\n", o.Name, verb)
	return nil
}

// MCPRemoveOptions is what "quiver mcp remove" runs with.
type MCPRemoveOptions struct {
	MCPAdmin
	// Name is the server's.
	Name string
	// Confirmed must be set (--yes): deleting is never implicit.
	Confirmed bool
}

// MCPRemove deletes a registered server, its token and its connection.
// One not registered, or a removal not Confirmed (refused before the data
// folder is touched), is a *UsageError.
func MCPRemove(ctx context.Context, o MCPRemoveOptions, env Env) error {
	env.defaults()
	if !o.Confirmed {
		return usagef("mcp remove: deleting %s needs --yes", o.Name)
	}
	rt, org, err := o.open(ctx, env)
	if err != nil {
		return err
	}
	defer rt.close()
	if err := rt.mcp.regs.Remove(ctx, org, o.Name, o.Confirmed); err != nil {
		return mcpRefusal(err)
	}
	fmt.Fprintf(env.Stdout, "%s removed\n", o.Name)
	return nil
}
