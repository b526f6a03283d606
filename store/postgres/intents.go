package postgres

import (
	"context"

	"github.com/quiverhq/quiver/store"
)

// GetIntentSettings is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetIntentSettings(_ context.Context, orgID string) (store.IntentSettings, error) {
	return store.IntentSettings{}, unsupported("get intent settings")
}

// PutIntentSettings is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) PutIntentSettings(_ context.Context, set store.IntentSettings) error {
	return unsupported("put intent settings")
}

// AddIntentTrigger is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) AddIntentTrigger(_ context.Context, t store.IntentTrigger, limit int) error {
	return unsupported("add intent trigger")
}

// RemoveIntentTrigger is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) RemoveIntentTrigger(_ context.Context, orgID, target, phrase string) error {
	return unsupported("remove intent trigger")
}

// ListIntentTriggers is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) ListIntentTriggers(_ context.Context, orgID string) ([]store.IntentTrigger, error) {
	return nil, unsupported("list intent triggers")
}

// GetUserIntentMode is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) GetUserIntentMode(_ context.Context, orgID, userID string) (string, error) {
	return "", unsupported("get user intent mode")
}

// SetUserIntentMode is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) SetUserIntentMode(_ context.Context, orgID, userID, mode string) error {
	return unsupported("set user intent mode")
}

// OpenIntentTargets is not implemented yet: it returns an error wrapping
// errors.ErrUnsupported.
func (s *Store) OpenIntentTargets(_ context.Context, orgID, conversationID string, targets []string) ([]string, error) {
	return nil, unsupported("open intent targets")
}
