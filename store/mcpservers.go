package store

import (
	"context"
	"errors"
	"time"
)

// MCP server types: which built-in family a registered server stands in for.
const (
	MCPGeneral    = "general"
	MCPWebSearch  = "web_search"
	MCPURLFetcher = "url_fetcher"
)

// Sentinel errors of MCPServers, returned wrapped; test with errors.Is.
var (
	// ErrNameTaken reports a server name already registered in the
	// organisation.
	ErrNameTaken = errors.New("name already registered")
	// ErrFamilyInUse reports a second enabled server of a typed family
	// (web_search, url_fetcher) in one organisation.
	ErrFamilyInUse = errors.New("another enabled server already has this type")
	// ErrSlotsFull reports an organisation at its server limit.
	ErrSlotsFull = errors.New("server limit reached")
)

// MCPServer is a user-registered remote MCP server.
type MCPServer struct {
	// ID is assigned by the caller before Create (the sealed token is bound
	// to it); it never changes.
	ID string
	// OrgID is the community or organisation the server belongs to.
	OrgID string
	// Name is unique per organisation.
	Name string
	URL  string
	// Token is the sealed auth token (secret.Keyring.Seal output bound to
	// this row); "" means none. Stores never see a plaintext token.
	Token string
	// Type is MCPGeneral, MCPWebSearch or MCPURLFetcher.
	Type    string
	Enabled bool
	// Tools are the tool names from the last successful discovery: nil
	// means no successful discovery yet ("Discovery unknown"), an empty
	// non-nil slice a discovery that found none ("None discovered").
	Tools     []string
	CreatedAt time.Time
	UpdatedAt time.Time
	// DiscoveredAt is when Tools was last written; zero when never.
	DiscoveredAt time.Time
}

// MCPServers stores MCP server registrations. Rules that span rows (unique
// name, one enabled server per typed family, the slot limit) are checked
// inside the write's transaction, so concurrent writers cannot break them.
type MCPServers interface {
	// CreateMCPServer inserts s. It fails, writing nothing, with
	// ErrNameTaken when the name is registered in s.OrgID, ErrFamilyInUse
	// when s is enabled and typed and another enabled server of s.OrgID has
	// that type, and ErrSlotsFull when s.OrgID already has limit servers
	// (enabled or not; limit <= 0 means no limit).
	CreateMCPServer(ctx context.Context, s MCPServer, limit int) error
	// GetMCPServer returns the server with that name in that organisation,
	// or ErrNotFound.
	GetMCPServer(ctx context.Context, orgID, name string) (MCPServer, error)
	// ListMCPServers returns the organisation's servers ordered by name.
	ListMCPServers(ctx context.Context, orgID string) ([]MCPServer, error)
	// ListEnabledMCPServers returns the enabled servers of the organisation
	// ordered by name.
	ListEnabledMCPServers(ctx context.Context, orgID string) ([]MCPServer, error)
	// SetMCPServerEnabled enables or disables a server, stamping UpdatedAt
	// with at. Enabling fails with ErrFamilyInUse as in Create; an unknown
	// name gives ErrNotFound.
	SetMCPServerEnabled(ctx context.Context, orgID, name string, enabled bool, at time.Time) error
	// DeleteMCPServer removes a server, or returns ErrNotFound.
	DeleteMCPServer(ctx context.Context, orgID, name string) error
	// SetMCPServerTools records a discovery of the server with that ID:
	// tools (non-nil, or it is refused; at most 100 names) and DiscoveredAt = at. It reports
	// whether anything changed: the same names in the same order write
	// nothing. A server deleted meanwhile is not an error (changed=false).
	SetMCPServerTools(ctx context.Context, orgID, id string, tools []string, at time.Time) (changed bool, err error)
	// CountMCPTokens returns how many servers, in every organisation, hold
	// a sealed token.
	CountMCPTokens(ctx context.Context) (int, error)
	// RewrapMCPTokens calls rewrap for every server holding a token, in
	// every organisation, and stores what it returns in place of the
	// token when it differs, all in one transaction: when rewrap fails
	// for any server nothing is written and its error is returned. It
	// returns how many tokens changed.
	RewrapMCPTokens(ctx context.Context, rewrap func(s MCPServer) (string, error)) (int, error)
}
