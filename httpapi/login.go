package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/accounts"
)

// Names and lifetimes of the sign-in confirmation.
const (
	// loginCookie holds the confirmation value the sign-in page echoes in
	// its form (a double submit): a page of another site can neither read
	// it nor send it (SameSite=Strict), so it cannot forge the form.
	loginCookie = "quiver_login"
	// confirmField is the form field that echoes loginCookie.
	confirmField = "confirm"
	// loginPageTTL is how long a sign-in page can be confirmed.
	loginPageTTL = 15 * time.Minute
)

func (s *server) loginRoutes() {
	register(s, huma.Operation{
		OperationID: "login-page", Method: http.MethodGet, Path: "/login", Tags: []string{"session"},
		Summary: "Show the sign-in page of a one-time login link",
		Description: "Changes nothing: the link stays unused, no session starts, and link previews in chat and mail " +
			"can fetch it any number of times. A working link answers 200 with an HTML page that names the account " +
			"(display name) and the organisation and has one Sign in button (a form that POSTs to /login); the page " +
			"sets the cookie " + loginCookie + " (HttpOnly, SameSite=Strict, Path=/login, " +
			strconv.Itoa(int(loginPageTTL/time.Minute)) + " minutes), the value its form echoes. A link that is invalid, already used or expired (or a disabled user's) " +
			"is a 401 naming nobody; a browser already signed in as another user gets a 409. Programs sign in " +
			"with POST /api/login instead.",
		Errors: []int{http.StatusUnauthorized, http.StatusConflict},
	}, public, s.loginPage)
	register(s, huma.Operation{
		OperationID: "login", Method: http.MethodPost, Path: "/login", Tags: []string{"session"},
		Summary: "Sign in from the sign-in page",
		Description: "The sign-in page's form: consumes the link's token (atomically: it works once, until it " +
			"expires), starts a browser session (the HttpOnly cookie " + sessionCookie + ") and redirects to /. " +
			"Refused with 403, the link left unused, when the request comes from another site (Sec-Fetch-Site, " +
			"else Origin against Host) or the " + confirmField + " field does not match the " + loginCookie +
			" cookie the page set. A browser signed in as another user gets a 409 and the link is left unused.",
		DefaultStatus: http.StatusSeeOther,
		Errors:        []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict},
	}, public, s.login)
	register(s, huma.Operation{
		OperationID: "api-login", Method: http.MethodPost, Path: "/api/login", Tags: []string{"session"},
		Summary: "Sign in with a login link's token (programs)",
		Description: "Consumes the link's token as POST /login does and answers what GET /api/me answers for the " +
			"new session (csrf_token included), with the session cookie " + sessionCookie + ". Refused with 403 " +
			"cross_origin from another site's page; 401 invalid_link for a link that is invalid, already used or " +
			"expired; 409 signed_in_as_other, the link left unused, with another user's session cookie.",
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict},
	}, public, s.apiLogin)
	documentLoginPages(s.api.OpenAPI())
}

type loginPageInput struct {
	Token   string `query:"token" required:"true" doc:"The secret of a one-time login link."`
	Session string `cookie:"quiver_session" doc:"The browser's current session, if any."`
	Confirm string `cookie:"quiver_login" doc:"An earlier sign-in page's confirmation value, kept when well formed."`
}

type loginFormInput struct {
	Session string `cookie:"quiver_session" doc:"The browser's current session, if any."`
	Confirm string `cookie:"quiver_login" doc:"The confirmation value the sign-in page set."`
	RawBody []byte `contentType:"application/x-www-form-urlencoded"`
}

type apiLoginInput struct {
	Session     string `cookie:"quiver_session" doc:"The browser's current session, if any."`
	ContentType string `header:"Content-Type" doc:"Must be application/json."`
	Body        loginRequest
}

// loginRequest is POST /api/login's body.
type loginRequest struct {
	Token string `json:"token" doc:"The secret of a one-time login link (the token query parameter of /login?token=…)."`
}

// loginOutput is a login page (Body with its headers) or a redirect with
// cookies.
type loginOutput struct {
	Status       int
	Location     string        `header:"Location"`
	SetCookie    []http.Cookie `header:"Set-Cookie"`
	ContentType  string        `header:"Content-Type"`
	CSP          string        `header:"Content-Security-Policy"`
	FrameOptions string        `header:"X-Frame-Options"`
	Body         []byte
}

type apiLoginOutput struct {
	SetCookie http.Cookie `header:"Set-Cookie"`
	Body      Me
}

// loginPage shows the page a working link opens, and changes nothing
// stored: the link is looked up, never consumed.
func (s *server) loginPage(ctx context.Context, in *loginPageInput) (*loginOutput, error) {
	acct, err := s.acc.PeekLink(ctx, in.Token, in.Session)
	if err != nil {
		return loginRefusal(ctx, err)
	}
	confirm := in.Confirm
	if !wellFormedSecret(confirm) {
		confirm = accounts.NewSecret()
	}
	u := acct.User
	body, err := confirmPage(confirmAccount{Name: u.DisplayName, UserID: u.ID, Role: u.Role, Org: acct.Org.Name}, in.Token, confirm)
	if err != nil {
		return nil, err
	}
	out := htmlPage(http.StatusOK, confirmCSP, body)
	out.SetCookie = []http.Cookie{s.cookieOf(ctx, loginCookie, "/login", http.SameSiteStrictMode, confirm, loginPageTTL)}
	return out, nil
}

// login signs in from the sign-in page's form: same-origin, confirmed by
// the page's cookie, then the link is consumed.
func (s *server) login(ctx context.Context, in *loginFormInput) (*loginOutput, error) {
	ri := infoFrom(ctx)
	if ri != nil && ri.crossOrigin {
		return loginRefusal(ctx, errCrossOrigin)
	}
	form, err := url.ParseQuery(string(in.RawBody))
	if err != nil || !wellFormedSecret(in.Confirm) ||
		subtle.ConstantTimeCompare([]byte(form.Get(confirmField)), []byte(in.Confirm)) != 1 {
		return loginRefusal(ctx, errUnconfirmed)
	}
	secret, _, err := s.useLink(ctx, form.Get("token"), in.Session)
	if err != nil {
		return loginRefusal(ctx, err)
	}
	return &loginOutput{Status: http.StatusSeeOther, Location: "/", SetCookie: []http.Cookie{
		s.cookie(ctx, secret, s.sessionTTL),
		s.cookieOf(ctx, loginCookie, "/login", http.SameSiteStrictMode, "", 0),
	}}, nil
}

// apiLogin signs a program in: the session cookie and what GET /api/me
// would answer for it.
func (s *server) apiLogin(ctx context.Context, in *apiLoginInput) (*apiLoginOutput, error) {
	if ri := infoFrom(ctx); ri != nil && ri.crossOrigin {
		return nil, errCrossOrigin
	}
	// huma reads a body without a type as JSON; a cross-site no-cors
	// fetch can send one without a preflight, so demand the type.
	if mt, _, err := mime.ParseMediaType(in.ContentType); err != nil || mt != "application/json" {
		return nil, apiErr(http.StatusUnsupportedMediaType, "unsupported_media_type", "send the login link's token as application/json")
	}
	secret, a, err := s.useLink(ctx, in.Body.Token, in.Session)
	if err != nil {
		return nil, loginError(err)
	}
	me, err := s.meOf(ctx, a)
	if err != nil {
		return nil, err
	}
	return &apiLoginOutput{SetCookie: s.cookie(ctx, secret, s.sessionTTL), Body: me.Body}, nil
}

// useLink signs in with a login link (accounts.Service.SignIn),
// returning the session's secret and caller.
func (s *server) useLink(ctx context.Context, token, session string) (string, *auth, error) {
	sess, err := s.acc.SignIn(ctx, token, session)
	if err != nil {
		return "", nil, err
	}
	if ri := infoFrom(ctx); ri != nil {
		ri.orgID, ri.userID = sess.User.OrgID, sess.User.ID
	}
	return sess.Secret, authOf(sess.Identity), nil
}

// The refusals of a sign-in that leave the link unused.
var (
	errCrossOrigin = apiErr(http.StatusForbidden, "cross_origin",
		"a sign-in must come from this server's own page, not another site's; the link was not used")
	errUnconfirmed = apiErr(http.StatusForbidden, "login_unconfirmed",
		"press Sign in on the page the login link opens (this confirmation is missing, expired or from another browser); the link was not used")
)

// loginError is the API error of a failed sign-in: invalid_link for a
// link that does not sign in, signed_in_as_other, or err itself.
func loginError(err error) error {
	switch {
	case errors.Is(err, accounts.ErrInvalidLink):
		return apiErr(http.StatusUnauthorized, "invalid_link", "this login link is invalid, already used or expired")
	case errors.Is(err, accounts.ErrSignedInAsOther):
		return apiErr(http.StatusConflict, "signed_in_as_other",
			"this browser is signed in as another user; sign out first (the link was not used)")
	}
	return err
}

// loginRefusal answers a failed GET or POST /login: for a browser (Accept
// prefers text/html) the page that says what happened, else the API error.
func loginRefusal(ctx context.Context, err error) (*loginOutput, error) {
	if ri := infoFrom(ctx); ri == nil || !ri.html {
		return nil, loginError(err)
	}
	switch {
	case errors.Is(err, accounts.ErrInvalidLink):
		return htmlPage(http.StatusUnauthorized, loginPageCSP, loginFailedHTML), nil
	case errors.Is(err, accounts.ErrSignedInAsOther):
		return htmlPage(http.StatusConflict, loginPageCSP, loginOtherHTML), nil
	case errors.Is(err, errCrossOrigin), errors.Is(err, errUnconfirmed):
		return htmlPage(http.StatusForbidden, loginPageCSP, loginRefusedHTML), nil
	}
	return nil, err
}

// wellFormedSecret reports whether v has accounts.NewSecret's shape: 32 bytes in
// unpadded base64url.
func wellFormedSecret(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil && len(b) == 32
}
