package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Names on the wire.
const (
	sessionCookie   = "quiver_session"
	csrfHeader      = "X-CSRF-Token"
	timezoneHeader  = "X-Timezone"
	securityBearer  = "bearer"
	securitySession = "session"
)

// access is who may call an operation.
type access int

const (
	public    access = iota // anyone
	signedIn                // any user of an organisation
	adminOnly               // an admin of the organisation
)

// auth is an authenticated request: the caller and how it proved who it is.
type auth struct {
	Caller
	// kind is store.CredAPIToken or store.CredSession.
	kind string
	// hash is the credential's hash (the session to end on logout).
	hash string
	// csrf is the session's anti-forgery token; "" for API tokens.
	csrf string
	// zoneHeader reports that Timezone came from the X-Timezone header
	// rather than the stored record.
	zoneHeader bool
}

func (a *auth) admin() bool { return a.Role == store.RoleAdmin }

type authKey struct{}

// authFrom returns the request's caller. Only operations registered with
// signedIn or adminOnly access have one; asking elsewhere is a bug.
func authFrom(ctx context.Context) *auth {
	a, ok := ctx.Value(authKey{}).(*auth)
	if !ok {
		panic("httpapi: authFrom on an operation without authentication")
	}
	return a
}

// authenticate is the huma middleware that admits a request to its
// operation: 401 without a valid credential, 403 for a session's unsafe
// request without its CSRF token or a member on an admin operation, 400
// for an X-Timezone that is not an IANA zone.
func (s *server) authenticate(ctx huma.Context, next func(huma.Context)) {
	acc, _ := ctx.Operation().Metadata[metaAccess].(access)
	if acc == public {
		next(ctx)
		return
	}
	a, e := s.identify(ctx)
	if e == nil {
		e = check(ctx, a, acc)
	}
	if e != nil {
		if e.status == http.StatusUnauthorized {
			ctx.SetHeader("WWW-Authenticate", `Bearer realm="quiver"`)
		}
		writeHumaError(ctx, e)
		return
	}
	if ri := infoFrom(ctx.Context()); ri != nil {
		ri.orgID, ri.userID = a.OrgID, a.UserID
	}
	next(huma.WithValue(ctx, authKey{}, a))
}

// check applies CSRF, role and timezone rules to an identified caller.
func check(ctx huma.Context, a *auth, acc access) *Error {
	if a.kind == store.CredSession && unsafeMethod(ctx.Method()) {
		got := ctx.Header(csrfHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(a.csrf)) != 1 {
			return apiErr(http.StatusForbidden, "csrf", "missing or wrong "+csrfHeader+" header (GET /api/me returns it)")
		}
	}
	if acc == adminOnly && !a.admin() {
		return apiErr(http.StatusForbidden, "forbidden", "only an admin may do this")
	}
	if tz := ctx.Header(timezoneHeader); tz != "" {
		if _, err := turn.LoadZone(tz); err != nil {
			return apiErr(http.StatusBadRequest, "bad_timezone", timezoneHeader+": "+err.Error())
		}
		a.Timezone, a.zoneHeader = tz, true
	}
	return nil
}

func unsafeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// identify finds the caller from the Authorization header, else the
// session cookie. A request with an Authorization header is judged by it
// alone: a bad token never falls back to a cookie.
func (s *server) identify(ctx huma.Context) (*auth, *Error) {
	if h := ctx.Header("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		tok = strings.TrimSpace(tok)
		if !strings.EqualFold(scheme, "Bearer") || tok == "" {
			return nil, apiErr(http.StatusUnauthorized, "unauthorized", "use Authorization: Bearer <token>")
		}
		return s.caller(ctx.Context(), store.CredAPIToken, tok, "invalid or expired API token")
	}
	c, err := huma.ReadCookie(ctx, sessionCookie)
	if err != nil || c.Value == "" {
		return nil, apiErr(http.StatusUnauthorized, "unauthorized", "sign in with a login link, or send an API token")
	}
	return s.caller(ctx.Context(), store.CredSession, c.Value, "the session has ended; sign in again")
}

// caller authenticates a secret of kind; invalid is the 401's message
// when it is unknown or expired.
func (s *server) caller(ctx context.Context, kind, secret, invalid string) (*auth, *Error) {
	id, err := s.acc.Authenticate(ctx, kind, secret)
	switch {
	case errors.Is(err, accounts.ErrUserDisabled):
		return nil, apiErr(http.StatusUnauthorized, "unauthorized", "this user has been disabled; ask an admin")
	case errors.Is(err, accounts.ErrInvalidCredential):
		return nil, apiErr(http.StatusUnauthorized, "unauthorized", invalid)
	case err != nil:
		s.internal(ctx, "authenticate", err)
		return nil, errInternal
	}
	return authOf(id), nil
}

// authOf is the request's auth for an authenticated identity.
func authOf(id accounts.Identity) *auth {
	c := id.Credential
	return &auth{Caller: callerOf(id.User), kind: c.Kind, hash: c.Hash, csrf: c.CSRF}
}

// callerOf is the caller a stored user is, with their stored zone.
func callerOf(u store.User) Caller {
	return Caller{
		OrgID: u.OrgID, UserID: u.ID, DisplayName: u.DisplayName,
		Department: u.Department, Timezone: u.Timezone, Role: u.Role,
	}
}
