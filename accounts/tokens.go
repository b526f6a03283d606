package accounts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

// Limits of an API token's fields.
const (
	// TokenIDLen is how many hex digits of a token's hash name it.
	TokenIDLen = 16
	// MaxTokenLabel is the most characters a token's label holds.
	MaxTokenLabel = 100
	// MaxTokenDays is the longest lifetime a token may be given, in days.
	MaxTokenDays = 3650
	// MaxTokens is the most unexpired API tokens one user may hold.
	MaxTokens = 100
)

// TokenID is the id an API token is listed and revoked by: the first
// TokenIDLen hex digits of its hash, which is not a secret.
func TokenID(c store.Credential) string { return c.Hash[:TokenIDLen] }

// NewToken is an API token just made: the stored credential and its
// secret, shown this once.
type NewToken struct {
	Credential store.Credential
	Secret     string
}

// CreateToken makes an API token for the user, labelled for people,
// expiring after expiresInDays days (0: never). A label longer than
// MaxTokenLabel, a lifetime outside 0–MaxTokenDays, or a user who holds
// MaxTokens unexpired tokens already is an *InvalidError, writing
// nothing; a user unknown or disabled gives ErrUserDisabled. The count
// is read before the token is written, so requests racing at the cap
// may each pass it once.
func (s *Service) CreateToken(ctx context.Context, orgID, userID, label string, expiresInDays int) (NewToken, error) {
	if utf8.RuneCountInString(label) > MaxTokenLabel {
		return NewToken{}, invalid("label", "label: at most "+strconv.Itoa(MaxTokenLabel)+" characters")
	}
	if expiresInDays < 0 || expiresInDays > MaxTokenDays {
		return NewToken{}, invalid("expires_in_days", "expires_in_days: use 0 (never) to "+strconv.Itoa(MaxTokenDays))
	}
	now := s.now()
	if err := s.checkTokenCount(ctx, orgID, userID, now); err != nil {
		return NewToken{}, err
	}
	c := store.Credential{Kind: store.CredAPIToken, OrgID: orgID, UserID: userID, Label: label, CreatedAt: now}
	if expiresInDays > 0 {
		c.ExpiresAt = now.Add(time.Duration(expiresInDays) * 24 * time.Hour)
	}
	secret, err := s.Issue(ctx, c)
	if err != nil {
		return NewToken{}, err
	}
	c.Hash = HashSecret(secret)
	return NewToken{Credential: c, Secret: secret}, nil
}

// checkTokenCount refuses a new token to a user who holds MaxTokens
// unexpired ones.
func (s *Service) checkTokenCount(ctx context.Context, orgID, userID string, now time.Time) error {
	creds, err := s.Tokens(ctx, orgID, userID)
	if err != nil {
		return err
	}
	live := 0
	for _, c := range creds {
		if c.ExpiresAt.IsZero() || c.ExpiresAt.After(now) {
			live++
		}
	}
	if live >= MaxTokens {
		return invalid("tokens", fmt.Sprintf("you hold %d API tokens, the most one person may: revoke one you no longer use first", live))
	}
	return nil
}

// Tokens lists the user's API tokens, newest first (hashes, never
// secrets).
func (s *Service) Tokens(ctx context.Context, orgID, userID string) ([]store.Credential, error) {
	creds, err := s.Store.ListCredentials(ctx, orgID, userID, store.CredAPIToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return creds, nil
}

// RevokeToken deletes the user's API token whose TokenID is id; none (a
// shorter or longer id included, or one revoked meanwhile) gives
// ErrNoToken.
func (s *Service) RevokeToken(ctx context.Context, orgID, userID, id string) error {
	if len(id) != TokenIDLen {
		return ErrNoToken
	}
	creds, err := s.Tokens(ctx, orgID, userID)
	if err != nil {
		return err
	}
	for _, c := range creds {
		if TokenID(c) != id {
			continue
		}
		err := s.Store.DeleteCredential(ctx, store.CredAPIToken, c.Hash)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return ErrNoToken // revoked meanwhile
		case err != nil:
			return fmt.Errorf("revoke token: %w", err)
		}
		return nil
	}
	return ErrNoToken
}
