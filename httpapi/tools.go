package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

func (s *server) toolRoutes() {
	register(s, huma.Operation{
		OperationID: "list-tools", Method: http.MethodGet, Path: "/api/tools", Tags: []string{"tools"},
		Summary:     "The tool catalog with definition sizes and ceilings",
		Description: "Every tool of the caller's organisation: the built-ins and its enabled MCP servers' tools.",
	}, signedIn, s.listTools)
}

type catalogOutput struct{ Body Catalog }

func (s *server) listTools(ctx context.Context, _ *struct{}) (*catalogOutput, error) {
	a := authFrom(ctx)
	cat, err := s.eng.Catalog(ctx, a.Caller)
	if err != nil {
		return nil, err
	}
	if cat.Tools == nil {
		cat.Tools = []ToolView{}
	}
	return &catalogOutput{Body: cat}, nil
}
