package store

import (
	"context"
	"time"
)

// StoredAgent is an agent definition saved in an organisation: the YAML an
// admin authored, validated before it is stored.
type StoredAgent struct {
	OrgID string
	// Name is unique per organisation.
	Name string
	// Definition is the agent file's YAML, as authored.
	Definition []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Agents stores agent definitions.
type Agents interface {
	// PutAgent inserts the agent or replaces the definition stored under
	// its name (keeping CreatedAt, stamping UpdatedAt).
	PutAgent(ctx context.Context, a StoredAgent) error
	// GetAgent returns an agent or ErrNotFound.
	GetAgent(ctx context.Context, orgID, name string) (StoredAgent, error)
	// ListAgents returns the organisation's agents ordered by name.
	ListAgents(ctx context.Context, orgID string) ([]StoredAgent, error)
	// DeleteAgent removes an agent, with its knowledge and its skill
	// attachments (the skills stay the organisation's), or returns
	// ErrNotFound.
	DeleteAgent(ctx context.Context, orgID, name string) error
}
