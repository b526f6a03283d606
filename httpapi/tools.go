package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

func (s *server) toolRoutes() {
	register(s, huma.Operation{
		OperationID: "list-tools", Method: http.MethodGet, Path: "/api/tools", Tags: []string{"tools"},
		Summary: "The tool catalog with definition sizes and ceilings",
	}, signedIn, s.listTools)
}

type catalogOutput struct{ Body Catalog }

func (s *server) listTools(context.Context, *struct{}) (*catalogOutput, error) {
	return &catalogOutput{Body: s.eng.Catalog()}, nil
}
