package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/store"
)

func (s *server) tokenRoutes() {
	register(s, huma.Operation{
		OperationID: "create-token", Method: http.MethodPost, Path: "/api/tokens", Tags: []string{"tokens"},
		Summary:       "Create an API token for yourself",
		Description:   "Returns the secret once; only its hash is stored.",
		DefaultStatus: http.StatusCreated,
	}, signedIn, s.createToken)
	register(s, huma.Operation{
		OperationID: "list-tokens", Method: http.MethodGet, Path: "/api/tokens", Tags: []string{"tokens"},
		Summary: "List API tokens (never their secrets)",
		Errors:  []int{http.StatusForbidden, http.StatusNotFound},
	}, signedIn, s.listTokens)
	register(s, huma.Operation{
		OperationID: "delete-token", Method: http.MethodDelete, Path: "/api/tokens/{id}", Tags: []string{"tokens"},
		Summary:       "Revoke an API token",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound},
	}, signedIn, s.deleteToken)
}

// Token is an API token as listed: never its secret.
type Token struct {
	ID        string     `json:"id" doc:"The first 16 hex digits of the token's SHA-256; revoke with it."`
	Label     string     `json:"label"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty" doc:"Absent when the token never expires."`
}

// NewToken is a token just created, with its secret.
type NewToken struct {
	ID        string     `json:"id"`
	Label     string     `json:"label"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Token     string     `json:"token" doc:"The secret, shown this once: send it as Authorization: Bearer <token>."`
}

func tokenView(c store.Credential) Token {
	t := Token{ID: accounts.TokenID(c), Label: c.Label, CreatedAt: c.CreatedAt}
	if !c.ExpiresAt.IsZero() {
		at := c.ExpiresAt
		t.ExpiresAt = &at
	}
	return t
}

type createTokenInput struct {
	Body struct {
		Label         string `json:"label,omitempty" maxLength:"100" doc:"A name for people: \"ci\", \"laptop\"."`
		ExpiresInDays int    `json:"expires_in_days,omitempty" minimum:"0" maximum:"3650" doc:"0 or absent: the token never expires."`
	}
}

type newTokenOutput struct{ Body NewToken }

func (s *server) createToken(ctx context.Context, in *createTokenInput) (*newTokenOutput, error) {
	a := authFrom(ctx)
	tok, err := s.acc.CreateToken(ctx, a.OrgID, a.UserID, in.Body.Label, in.Body.ExpiresInDays)
	if err != nil {
		return nil, accountError(err)
	}
	v := tokenView(tok.Credential)
	return &newTokenOutput{Body: NewToken{ID: v.ID, Label: v.Label, CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt, Token: tok.Secret}}, nil
}

type userQuery struct {
	User string `query:"user" doc:"Admins: act on another user of the organisation; default yourself."`
}

type tokensOutput struct {
	Body struct {
		Tokens []Token `json:"tokens"`
	}
}

func (s *server) listTokens(ctx context.Context, in *userQuery) (*tokensOutput, error) {
	a := authFrom(ctx)
	user, err := s.targetUser(ctx, a, in.User)
	if err != nil {
		return nil, err
	}
	creds, err := s.acc.Tokens(ctx, a.OrgID, user)
	if err != nil {
		return nil, err
	}
	out := &tokensOutput{}
	out.Body.Tokens = make([]Token, 0, len(creds))
	for _, c := range creds {
		out.Body.Tokens = append(out.Body.Tokens, tokenView(c))
	}
	return out, nil
}

type deleteTokenInput struct {
	ID   string `path:"id" doc:"The token's id from GET /api/tokens."`
	User string `query:"user" doc:"Admins: revoke another user's token."`
}

func (s *server) deleteToken(ctx context.Context, in *deleteTokenInput) (*struct{}, error) {
	a := authFrom(ctx)
	user, err := s.targetUser(ctx, a, in.User)
	if err != nil {
		return nil, err
	}
	return nil, accountError(s.acc.RevokeToken(ctx, a.OrgID, user, in.ID))
}

// targetUser is the user a token operation acts on: the caller, or for
// an admin another user of the same organisation.
func (s *server) targetUser(ctx context.Context, a *auth, user string) (string, error) {
	if user == "" || user == a.UserID {
		return a.UserID, nil
	}
	if !a.admin() {
		return "", apiErr(http.StatusForbidden, "forbidden", "only an admin may manage another user's tokens")
	}
	if _, err := s.acc.User(ctx, a.OrgID, user); err != nil {
		return "", accountError(err)
	}
	return user, nil
}
