package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/store"
)

func (s *server) sessionRoutes() {
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
	register(s, huma.Operation{
		OperationID: "update-me", Method: http.MethodPatch, Path: "/api/me", Tags: []string{"session"},
		Summary:     "Change your display name, department or timezone",
		Description: "Absent fields keep their value. Returns what GET /api/me returns.",
	}, signedIn, s.updateMe)
}

type logoutOutput struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
}

// cookie is the session cookie; a zero maxAge deletes it.
func (s *server) cookie(ctx context.Context, value string, maxAge time.Duration) http.Cookie {
	return s.cookieOf(ctx, sessionCookie, "/", http.SameSiteLaxMode, value, maxAge)
}

// cookieOf is an HttpOnly cookie, Secure over TLS or with SecureCookies;
// a zero maxAge deletes it.
func (s *server) cookieOf(ctx context.Context, name, path string, site http.SameSite, value string, maxAge time.Duration) http.Cookie {
	secure := s.secureCookies
	if ri := infoFrom(ctx); ri != nil && ri.tls {
		secure = true
	}
	c := http.Cookie{
		Name: name, Value: value, Path: path,
		HttpOnly: true, Secure: secure, SameSite: site,
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
	if err := s.acc.EndSession(ctx, a.hash); err != nil {
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
	return s.meOf(ctx, authFrom(ctx))
}

// meOf is what GET /api/me answers for a.
func (s *server) meOf(ctx context.Context, a *auth) (*meOutput, error) {
	org, err := s.acc.Org(ctx, a.OrgID)
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

type updateMeInput struct{ Body profileChange }

func (s *server) updateMe(ctx context.Context, in *updateMeInput) (*meOutput, error) {
	a := authFrom(ctx)
	// The profile only: the role stays as stored, never as read before an
	// admin's concurrent change.
	u, err := s.acc.UpdateProfile(ctx, a.OrgID, a.UserID, in.Body.profile())
	if err != nil {
		return nil, accountError(err)
	}
	updated := *a
	updated.Caller = callerOf(u)
	if a.zoneHeader {
		updated.Timezone = a.Timezone
	}
	return s.meOf(ctx, &updated)
}
