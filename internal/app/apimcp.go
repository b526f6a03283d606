package app

import (
	"context"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/settings"
	"github.com/quiverhq/quiver/store"
)

// apiMCP is httpapi.MCPAdmin over the organisations' MCP registrations.
// A request that connects (Add) is given the organisation's network mode
// from its settings.
type apiMCP struct {
	regs *mcpclient.Registrations
	orgs *settings.Service
}

var _ httpapi.MCPAdmin = apiMCP{}

// refusal maps a registration refusal (mcpclient.Refusal) to the API's
// errors: a store rule stays wrapped (409/404), any other refusal is a
// *BadRequest.
func refusal(err error) error {
	if msg, rule, ok := mcpclient.Refusal(err); ok && rule == nil {
		return &httpapi.BadRequest{Msg: msg}
	}
	return err
}

// Add implements httpapi.MCPAdmin: the fields are validated before the
// organisation's settings are read for its network mode
// (mcpclient.Registrations.AddUnder).
func (m apiMCP) Add(ctx context.Context, orgID, name, url, token, typ string) (store.MCPServer, error) {
	reg := mcpclient.Registration{Name: name, URL: url, Token: token, Type: typ}
	rec, err := m.regs.AddUnder(ctx, orgID, m.orgs, reg)
	return rec, refusal(err)
}

// SetEnabled implements httpapi.MCPAdmin.
func (m apiMCP) SetEnabled(ctx context.Context, orgID, name string, on bool) error {
	return refusal(m.regs.SetEnabled(ctx, orgID, name, on))
}

// Remove implements httpapi.MCPAdmin.
func (m apiMCP) Remove(ctx context.Context, orgID, name string) error {
	return refusal(m.regs.Remove(ctx, orgID, name, true))
}
