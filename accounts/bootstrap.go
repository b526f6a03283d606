package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/store"
)

// What a first start makes.
const (
	// FirstOrgID and FirstOrgName name the organisation a first start
	// makes.
	FirstOrgID   = "default"
	FirstOrgName = "Default"
	// FirstAdminID and FirstAdminName name its admin.
	FirstAdminID   = "admin"
	FirstAdminName = "Admin"
)

// ExampleAgent is the agent a first start stores in the new organisation
// (through Service.Agents).
type ExampleAgent struct {
	Name string
	// Definition is the agent file's YAML.
	Definition []byte
}

// Bootstrap prepares a new installation: the organisation FirstOrgID, its
// admin FirstAdminID, the example agent (when Agents is set and
// example.Name is not empty) and a login link for the admin, which it
// returns with made true. An installation whose first organisation has a
// user, or with organisations but none of that id (made by hand), is left
// alone: made is false and nothing is written. A first start cut short
// (the process stopped between these writes) is completed by the next
// one: each step skips what already exists. Of processes starting
// together on one new database (replicas), only the one that creates the
// admin goes on to the example agent and the link: the others return
// made false, so one link is printed.
func (s *Service) Bootstrap(ctx context.Context, example ExampleAgent) (link LoginLink, made bool, err error) {
	if fresh, err := s.fresh(ctx); err != nil || !fresh {
		return LoginLink{}, false, err
	}
	now := s.now()
	steps := []struct {
		what string
		do   func() error
	}{
		{"create organisation", func() error {
			return s.Store.CreateOrg(ctx, store.Org{ID: FirstOrgID, Name: FirstOrgName, CreatedAt: now})
		}},
		{"create admin", func() error {
			return s.Store.CreateUser(ctx, store.User{ID: FirstAdminID, OrgID: FirstOrgID, DisplayName: FirstAdminName,
				Role: store.RoleAdmin, CreatedAt: now, UpdatedAt: now})
		}},
	}
	for i, step := range steps {
		err := step.do()
		if errors.Is(err, store.ErrExists) && i == len(steps)-1 {
			// Another process made the admin meanwhile: its start goes on.
			return LoginLink{}, false, nil
		}
		if err != nil && !errors.Is(err, store.ErrExists) {
			return LoginLink{}, false, fmt.Errorf("%s: %w", step.what, err)
		}
	}
	if err := s.storeExample(ctx, example, now); err != nil {
		return LoginLink{}, false, err
	}
	link, err = s.IssueLoginLink(ctx, FirstOrgID, FirstAdminID)
	if err != nil {
		return LoginLink{}, false, fmt.Errorf("store login link: %w", err)
	}
	return link, true, nil
}

// fresh reports whether the installation needs (the rest of) a first
// start: no organisation at all, or the first one without a user.
func (s *Service) fresh(ctx context.Context) (bool, error) {
	n, err := s.Store.CountOrgs(ctx)
	if err != nil || n == 0 {
		return n == 0, wrap("count organisations", err)
	}
	users, err := s.Store.ListUsers(ctx, FirstOrgID)
	if err != nil || len(users) > 0 {
		return false, wrap("list users", err)
	}
	if _, err := s.Store.GetOrg(ctx, FirstOrgID); errors.Is(err, store.ErrNotFound) {
		return false, nil // organisations made by hand, not by a first start
	} else if err != nil {
		return false, wrap("read organisation", err)
	}
	return true, nil
}

// storeExample stores the example agent unless it exists.
func (s *Service) storeExample(ctx context.Context, example ExampleAgent, now time.Time) error {
	if s.Agents == nil || example.Name == "" {
		return nil
	}
	_, err := s.Agents.GetAgent(ctx, FirstOrgID, example.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if err := s.Agents.PutAgent(ctx, store.StoredAgent{OrgID: FirstOrgID, Name: example.Name,
			Definition: example.Definition, CreatedAt: now, UpdatedAt: now}); err != nil {
			return fmt.Errorf("create example agent: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read example agent: %w", err)
	}
	return nil
}

// wrap prefixes a non-nil err with op.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
