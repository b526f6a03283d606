package app

import (
	"context"
	"errors"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/store"
)

// apiMCP is httpapi.MCPAdmin over the MCP client service.
type apiMCP struct{ svc *mcpclient.Service }

var _ httpapi.MCPAdmin = apiMCP{}

// refusal maps a service refusal to the API's errors: a store rule stays
// wrapped (409/404), anything else the caller did is a *BadRequest.
func refusal(err error) error {
	var re *mcpclient.Error
	if !errors.As(err, &re) {
		return err
	}
	if re.Err != nil {
		return err
	}
	return &httpapi.BadRequest{Msg: re.Msg}
}

func (m apiMCP) Add(ctx context.Context, orgID, name, url, token, typ string) (store.MCPServer, error) {
	rec, err := m.svc.Add(ctx, orgID, mcpclient.Registration{Name: name, URL: url, Token: token, Type: typ})
	return rec, refusal(err)
}

func (m apiMCP) SetEnabled(ctx context.Context, orgID, name string, on bool) error {
	return refusal(m.svc.SetEnabled(ctx, orgID, name, on))
}

func (m apiMCP) Remove(ctx context.Context, orgID, name string) error {
	return refusal(m.svc.Remove(ctx, orgID, name, true))
}
