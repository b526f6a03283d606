package postgres

import (
	"context"
	"time"

	"github.com/quiverhq/quiver/store"
)

// CreateMCPServer is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) CreateMCPServer(_ context.Context, srv store.MCPServer, limit int) error {
	return unsupported("create mcp server")
}

// GetMCPServer is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetMCPServer(_ context.Context, orgID, name string) (store.MCPServer, error) {
	return store.MCPServer{}, unsupported("get mcp server")
}

// ListMCPServers is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListMCPServers(_ context.Context, orgID string) ([]store.MCPServer, error) {
	return nil, unsupported("list mcp servers")
}

// ListEnabledMCPServers is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListEnabledMCPServers(_ context.Context, orgID string) ([]store.MCPServer, error) {
	return nil, unsupported("list enabled mcp servers")
}

// SetMCPServerEnabled is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) SetMCPServerEnabled(_ context.Context, orgID, name string, enabled bool, at time.Time) error {
	return unsupported("set mcp server enabled")
}

// DeleteMCPServer is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) DeleteMCPServer(_ context.Context, orgID, name string) error {
	return unsupported("delete mcp server")
}

// SetMCPServerTools is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) SetMCPServerTools(_ context.Context, orgID, id string, tools []string, at time.Time) (changed bool, err error) {
	return false, unsupported("set mcp server tools")
}

// CountMCPTokens is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) CountMCPTokens(_ context.Context) (int, error) {
	return 0, unsupported("count mcp tokens")
}

// RewrapMCPTokens is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) RewrapMCPTokens(_ context.Context, rewrap func(s store.MCPServer) (string, error)) (int, error) {
	return 0, unsupported("rewrap mcp tokens")
}
