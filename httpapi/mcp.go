package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/store"
)

// MCPAdmin changes an organisation's MCP server registrations; its calls
// may contact the server (Add tests the connection and discovers tools).
// internal/app implements it over mcpclient. Errors: a caller's mistake
// (bad URL, failed connection test) is *BadRequest; store.ErrNameTaken,
// store.ErrFamilyInUse and store.ErrSlotsFull (wrapped) are 409s;
// store.ErrNotFound is a 404; anything else is logged and answered 500.
type MCPAdmin interface {
	// Add registers a server (enabled) after a successful connection
	// test; token is the plaintext auth token ("" for none), sealed
	// before it is stored; typ is a store.MCP… type.
	Add(ctx context.Context, orgID, name, url, token, typ string) (store.MCPServer, error)
	// SetEnabled enables or disables a server.
	SetEnabled(ctx context.Context, orgID, name string, on bool) error
	// Remove deletes a server and closes its connection.
	Remove(ctx context.Context, orgID, name string) error
}

func (s *server) mcpRoutes() {
	tags := []string{"mcp"}
	register(s, huma.Operation{
		OperationID: "list-mcp-servers", Method: http.MethodGet, Path: "/api/mcp-servers", Tags: tags,
		Summary:     "The organisation's MCP servers",
		Description: "Read from the store: the servers are not contacted.",
	}, adminOnly, s.listMCP)
	register(s, huma.Operation{
		OperationID: "get-mcp-server", Method: http.MethodGet, Path: "/api/mcp-servers/{name}", Tags: tags,
		Summary: "One MCP server",
		Errors:  []int{http.StatusNotFound},
	}, adminOnly, s.getMCP)
	register(s, huma.Operation{
		OperationID: "add-mcp-server", Method: http.MethodPost, Path: "/api/mcp-servers", Tags: tags,
		Summary:       "Register an MCP server after a connection test",
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusConflict, http.StatusNotImplemented},
	}, adminOnly, s.addMCP)
	for _, on := range []bool{true, false} {
		verb, summary := "disable", "Disable an MCP server"
		if on {
			verb, summary = "enable", "Enable an MCP server"
		}
		register(s, huma.Operation{
			OperationID: verb + "-mcp-server", Method: http.MethodPost, Path: "/api/mcp-servers/{name}/" + verb, Tags: tags,
			Summary:       summary,
			DefaultStatus: http.StatusNoContent,
			Errors:        []int{http.StatusNotFound, http.StatusConflict, http.StatusNotImplemented},
		}, adminOnly, func(ctx context.Context, in *mcpPath) (*struct{}, error) { return s.setMCPEnabled(ctx, in.Name, on) })
	}
	register(s, huma.Operation{
		OperationID: "delete-mcp-server", Method: http.MethodDelete, Path: "/api/mcp-servers/{name}", Tags: tags,
		Summary:       "Delete an MCP server",
		Description:   "Needs ?confirm=true.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusNotImplemented},
	}, adminOnly, s.deleteMCP)
}

// MCPServer is a registration as the API shows it: never the token.
type MCPServer struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Type    string `json:"type" enum:"general,web_search,url_fetcher"`
	Enabled bool   `json:"enabled"`
	Token   string `json:"token" enum:"set,not set" doc:"Whether an auth token is stored; never the token."`
	// Discovery distinguishes no discovery yet from one that found none.
	Discovery    string               `json:"discovery" enum:"unknown,none,discovered" doc:"unknown: never discovered (\"Discovery unknown\"); none: discovered no tools (\"None discovered\"); discovered: tools lists them."`
	Tools        []string             `json:"tools" doc:"Tool names from the last discovery."`
	Names        []mcpclient.ToolName `json:"names" doc:"Each discovered tool with the name models call it by (server__tool; see docs/mcp.md), in the order of tools."`
	DiscoveredAt *time.Time           `json:"discovered_at,omitempty"`
	CreatedAt    time.Time            `json:"created_at"`
	UpdatedAt    time.Time            `json:"updated_at"`
}

func mcpView(m store.MCPServer) MCPServer {
	v := MCPServer{
		Name: m.Name, URL: m.URL, Type: m.Type, Enabled: m.Enabled, Token: "not set",
		Discovery: "discovered", Tools: m.Tools, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
		Names: mcpclient.WireNames(m.Name, m.Tools),
	}
	if m.Token != "" {
		v.Token = "set"
	}
	switch {
	case m.Tools == nil:
		v.Discovery, v.Tools, v.Names = "unknown", []string{}, []mcpclient.ToolName{}
	case len(m.Tools) == 0:
		v.Discovery = "none"
	}
	if !m.DiscoveredAt.IsZero() {
		at := m.DiscoveredAt
		v.DiscoveredAt = &at
	}
	return v
}

type mcpServersOutput struct {
	Body struct {
		Servers []MCPServer `json:"servers"`
	}
}

func (s *server) listMCP(ctx context.Context, _ *struct{}) (*mcpServersOutput, error) {
	a := authFrom(ctx)
	ms, err := s.st.ListMCPServers(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	out := &mcpServersOutput{}
	out.Body.Servers = make([]MCPServer, 0, len(ms))
	for _, m := range ms {
		out.Body.Servers = append(out.Body.Servers, mcpView(m))
	}
	return out, nil
}

type mcpPath struct {
	Name string `path:"name" doc:"The server's name."`
}

type mcpOutput struct{ Body MCPServer }

func (s *server) getMCP(ctx context.Context, in *mcpPath) (*mcpOutput, error) {
	a := authFrom(ctx)
	m, err := s.st.GetMCPServer(ctx, a.OrgID, in.Name)
	if err != nil {
		return nil, mcpError(err)
	}
	return &mcpOutput{Body: mcpView(m)}, nil
}

type addMCPInput struct {
	Body struct {
		Name  string `json:"name" minLength:"1" maxLength:"64"`
		URL   string `json:"url" minLength:"1" maxLength:"2048" doc:"The server's streamable HTTP (or SSE) endpoint."`
		Token string `json:"token,omitempty" maxLength:"4096" doc:"Sent as a bearer token to the server; write-only."`
		Type  string `json:"type,omitempty" enum:"general,web_search,url_fetcher" default:"general"`
	}
}

func (s *server) addMCP(ctx context.Context, in *addMCPInput) (*mcpOutput, error) {
	if s.mcp == nil {
		return nil, errMCPOff
	}
	a := authFrom(ctx)
	m, err := s.mcp.Add(ctx, a.OrgID, in.Body.Name, in.Body.URL, in.Body.Token, in.Body.Type)
	if err != nil {
		return nil, mcpError(err)
	}
	return &mcpOutput{Body: mcpView(m)}, nil
}

func (s *server) setMCPEnabled(ctx context.Context, name string, on bool) (*struct{}, error) {
	if s.mcp == nil {
		return nil, errMCPOff
	}
	a := authFrom(ctx)
	if err := s.mcp.SetEnabled(ctx, a.OrgID, name, on); err != nil {
		return nil, mcpError(err)
	}
	return nil, nil
}

type deleteMCPInput struct {
	Name    string `path:"name"`
	Confirm bool   `query:"confirm" doc:"Must be true: deleting is not undone."`
}

func (s *server) deleteMCP(ctx context.Context, in *deleteMCPInput) (*struct{}, error) {
	if s.mcp == nil {
		return nil, errMCPOff
	}
	if !in.Confirm {
		return nil, apiErr(http.StatusBadRequest, "confirmation_required", "add ?confirm=true to delete the server")
	}
	a := authFrom(ctx)
	if err := s.mcp.Remove(ctx, a.OrgID, in.Name); err != nil {
		return nil, mcpError(err)
	}
	return nil, nil
}

var errMCPOff = apiErr(http.StatusNotImplemented, "not_configured", "MCP server administration is not available on this server")

// mcpError maps the store's sentinels to statuses; anything else goes to
// publicError (BadRequest → 400, the rest 500).
func mcpError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("no such MCP server")
	case errors.Is(err, store.ErrNameTaken):
		return apiErr(http.StatusConflict, "name_taken", "an MCP server of that name is already registered")
	case errors.Is(err, store.ErrFamilyInUse):
		return apiErr(http.StatusConflict, "type_in_use", "another enabled server already has this type")
	case errors.Is(err, store.ErrSlotsFull):
		return apiErr(http.StatusConflict, "limit_reached", "the organisation has reached its MCP server limit")
	}
	return err
}
