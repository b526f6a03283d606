package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

func (s *server) sessionRoutes() {
	register(s, huma.Operation{
		OperationID: "login", Method: http.MethodGet, Path: "/login", Tags: []string{"session"},
		Summary: "Sign in with a one-time login link",
		Description: "Consumes the link's token (it works once, until it expires), starts a browser session " +
			"(the HttpOnly cookie " + sessionCookie + ") and redirects to /.",
		DefaultStatus: http.StatusSeeOther,
		Errors:        []int{http.StatusUnauthorized},
	}, public, s.login)
	register(s, huma.Operation{
		OperationID: "logout", Method: http.MethodPost, Path: "/api/logout", Tags: []string{"session"},
		Summary:       "End the browser session",
		Description:   "Deletes the session and clears its cookie. API tokens are revoked with DELETE /api/tokens/{id} instead.",
		DefaultStatus: http.StatusNoContent,
	}, signedIn, s.logout)
	register(s, huma.Operation{
		OperationID: "me", Method: http.MethodGet, Path: "/api/me", Tags: []string{"session"},
		Summary:     "Who the caller is",
		Description: "The caller's user record and, for a browser session, the CSRF token unsafe requests must send.",
	}, signedIn, s.me)
}

type loginInput struct {
	Token string `query:"token" required:"true" doc:"The secret of a one-time login link."`
}

type loginOutput struct {
	Status    int
	Location  string      `header:"Location"`
	SetCookie http.Cookie `header:"Set-Cookie"`
}

type logoutOutput struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
}

// login trades a one-time link for a session.
func (s *server) login(ctx context.Context, in *loginInput) (*loginOutput, error) {
	now := s.now()
	link, err := s.st.ConsumeCredential(ctx, store.CredLoginLink, HashSecret(in.Token), now)
	if err == nil {
		_, err = s.st.GetUser(ctx, link.OrgID, link.UserID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, apiErr(http.StatusUnauthorized, "invalid_link", "this login link is invalid, already used or expired")
	}
	if err != nil {
		return nil, err
	}
	secret, err := IssueCredential(ctx, s.st, store.Credential{
		Kind: store.CredSession, OrgID: link.OrgID, UserID: link.UserID,
		CSRF: NewSecret(), CreatedAt: now, ExpiresAt: now.Add(s.sessionTTL),
	})
	if err != nil {
		return nil, err
	}
	if ri := infoFrom(ctx); ri != nil {
		ri.orgID, ri.userID = link.OrgID, link.UserID
	}
	return &loginOutput{
		Status: http.StatusSeeOther, Location: "/",
		SetCookie: s.cookie(ctx, secret, s.sessionTTL),
	}, nil
}

// cookie is the session cookie; a zero maxAge deletes it.
func (s *server) cookie(ctx context.Context, value string, maxAge time.Duration) http.Cookie {
	secure := s.secureCookies
	if ri := infoFrom(ctx); ri != nil && ri.tls {
		secure = true
	}
	c := http.Cookie{
		Name: sessionCookie, Value: value, Path: "/",
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge <= 0 {
		c.MaxAge = -1 // Max-Age=0: delete now
	}
	return c
}

func (s *server) logout(ctx context.Context, _ *struct{}) (*logoutOutput, error) {
	a := authFrom(ctx)
	if a.kind != store.CredSession {
		return nil, apiErr(http.StatusBadRequest, "not_session", "logout ends a browser session; revoke an API token with DELETE /api/tokens/{id}")
	}
	if err := s.st.DeleteCredential(ctx, store.CredSession, a.hash); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return &logoutOutput{SetCookie: s.cookie(ctx, "", 0)}, nil
}

// Me is the caller as GET /api/me shows it.
type Me struct {
	UserID      string `json:"user_id"`
	OrgID       string `json:"org_id"`
	OrgName     string `json:"org_name"`
	DisplayName string `json:"display_name"`
	Department  string `json:"department"`
	Timezone    string `json:"timezone" doc:"The X-Timezone header when sent, else the stored zone; empty means UTC."`
	Role        string `json:"role" enum:"admin,member"`
	Auth        string `json:"auth" enum:"token,session" doc:"How the request authenticated."`
	CSRFToken   string `json:"csrf_token,omitempty" doc:"For sessions: the X-CSRF-Token value unsafe requests must carry."`
}

type meOutput struct{ Body Me }

func (s *server) me(ctx context.Context, _ *struct{}) (*meOutput, error) {
	a := authFrom(ctx)
	org, err := s.st.GetOrg(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	me := Me{
		UserID: a.UserID, OrgID: a.OrgID, OrgName: org.Name, DisplayName: a.DisplayName,
		Department: a.Department, Timezone: a.Timezone, Role: a.Role, Auth: "token",
	}
	if a.kind == store.CredSession {
		me.Auth, me.CSRFToken = "session", a.csrf
	}
	return &meOutput{Body: me}, nil
}
