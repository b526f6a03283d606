package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/agent"
	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// The people of an organisation, administered by its admins. A user is
// never deleted: disabling keeps their conversations and records, and
// deletes every credential they hold; enabling lets them back in with a
// new login link.
func (s *server) userRoutes() {
	tags := []string{"users"}
	register(s, huma.Operation{
		OperationID: "list-users", Method: http.MethodGet, Path: "/api/users", Tags: tags,
		Summary: "The organisation's users, disabled ones included, by id",
	}, adminOnly, s.listUsers)
	register(s, huma.Operation{
		OperationID: "create-user", Method: http.MethodPost, Path: "/api/users", Tags: tags,
		Summary: "Add a user, with a one-time login link",
		Description: "The id is generated. The login link works once, for 24 hours; give it to the person. Only its " +
			"hash is stored: it is in this response only. The user and the link are stored together or not at all.",
		DefaultStatus: http.StatusCreated,
	}, adminOnly, s.createUser)
	register(s, huma.Operation{
		OperationID: "update-user", Method: http.MethodPatch, Path: "/api/users/{id}", Tags: tags,
		Summary: "Change a user's name, department, timezone or role",
		Description: "Absent fields keep their stored value, a concurrent edit's included. Demoting the " +
			"organisation's last enabled admin is 409 last_admin.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, adminOnly, s.updateUser)
	register(s, huma.Operation{
		OperationID: "disable-user", Method: http.MethodDelete, Path: "/api/users/{id}", Tags: tags,
		Summary: "Disable a user",
		Description: "Their sessions, API tokens and login links stop working at once and their running turns and " +
			"console runs are cancelled; their conversations stay. Disabling a disabled user changes nothing. Yourself: 400 " +
			"cannot_disable_self; the organisation's last enabled admin: 409 last_admin.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusNotFound, http.StatusConflict},
	}, adminOnly, s.disableUser)
	register(s, huma.Operation{
		OperationID: "enable-user", Method: http.MethodPost, Path: "/api/users/{id}/enable", Tags: tags,
		Summary: "Enable a disabled user",
		Description: "Their conversations are as they left them; their old sessions, API tokens and login links stay " +
			"revoked: make them a new login link. Enabling an enabled user changes nothing.",
		Errors: []int{http.StatusNotFound},
	}, adminOnly, s.enableUser)
	register(s, huma.Operation{
		OperationID: "create-login-link", Method: http.MethodPost, Path: "/api/users/{id}/login-link", Tags: tags,
		Summary:       "A new one-time login link for a user",
		Description:   "Works once, for 24 hours; earlier links keep working until used or expired. A disabled user is 409 user_disabled: enable them first.",
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusNotFound, http.StatusConflict},
	}, adminOnly, s.createLoginLink)
}

// User is a user as the API shows them.
type User struct {
	ID          string    `json:"id"`
	DisplayName string    `json:"display_name"`
	Department  string    `json:"department"`
	Timezone    string    `json:"timezone" doc:"The user's IANA zone; empty when none is set."`
	Role        string    `json:"role" enum:"admin,member"`
	Disabled    bool      `json:"disabled" doc:"Disabled users cannot sign in and hold no credentials."`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func userView(u store.User) User {
	return User{
		ID: u.ID, DisplayName: u.DisplayName, Department: u.Department, Timezone: u.Timezone,
		Role: u.Role, Disabled: !u.DisabledAt.IsZero(), CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
	}
}

// LoginLinkTTL is how long a login link works.
const LoginLinkTTL = 24 * time.Hour

// IssueLoginLink stores a one-time login link for the user, valid for
// LoginLinkTTL from now, and returns its secret (served at
// /login?token=SECRET, shown once) and when it expires. A user who is
// unknown or disabled gives store.ErrNotFound (wrapped).
func IssueLoginLink(ctx context.Context, st store.Accounts, orgID, userID string, now time.Time) (string, time.Time, error) {
	c := loginLink(orgID, userID, now)
	secret, err := IssueCredential(ctx, st, c)
	return secret, c.ExpiresAt, err
}

// loginLink is a login link for the user made at now, without its hash.
func loginLink(orgID, userID string, now time.Time) store.Credential {
	return store.Credential{
		Kind: store.CredLoginLink, OrgID: orgID, UserID: userID, CreatedAt: now, ExpiresAt: now.Add(LoginLinkTTL),
	}
}

// LoginLink is a login link just made: shown once.
type LoginLink struct {
	LoginLink string    `json:"login_link" doc:"The path to open on this server (/login?token=…); works once." example:"/login?token=…"`
	ExpiresAt time.Time `json:"expires_at"`
}

func loginLinkView(secret string, expires time.Time) LoginLink {
	return LoginLink{LoginLink: "/login?token=" + secret, ExpiresAt: expires}
}

// profileChange is what may change about a user's profile; absent fields
// keep their value.
type profileChange struct {
	DisplayName *string `json:"display_name,omitempty" minLength:"1" maxLength:"100" doc:"Not blank; no control characters or line breaks."`
	Department  *string `json:"department,omitempty" maxLength:"100"`
	Timezone    *string `json:"timezone,omitempty" maxLength:"64" doc:"An IANA zone such as Europe/Paris; empty clears it."`
}

// apply validates p and writes it into u.
func (p profileChange) apply(u *store.User) error {
	if p.DisplayName != nil {
		v, err := profileText("display_name", *p.DisplayName)
		if err != nil {
			return err
		}
		if v == "" {
			return badRequest("display_name must not be blank")
		}
		u.DisplayName = v
	}
	if p.Department != nil {
		v, err := profileText("department", *p.Department)
		if err != nil {
			return err
		}
		u.Department = v
	}
	if p.Timezone != nil {
		v := strings.TrimSpace(*p.Timezone)
		if v != "" {
			if _, err := turn.LoadZone(v); err != nil {
				return apiErr(http.StatusBadRequest, "bad_timezone", "timezone: "+err.Error())
			}
		}
		u.Timezone = v
	}
	return nil
}

// profileText trims a profile field and refuses control characters and
// line or paragraph separators: the name and department go into a turn's
// context message, where a line break would let them pose as another
// line.
func profileText(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if strings.IndexFunc(v, breaksLine) >= 0 {
		return "", badRequest(field + " must not contain control characters or line breaks")
	}
	return v, nil
}

func breaksLine(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) }

// orgUser returns a user of the caller's organisation; one of another
// organisation is as absent as a missing one.
func (s *server) orgUser(ctx context.Context, a *auth, id string) (store.User, error) {
	u, err := s.st.GetUser(ctx, a.OrgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return u, errNoUser
	}
	return u, err
}

var errNoUser = notFound("no such user")

type usersOutput struct {
	Body struct {
		Users []User `json:"users"`
	}
}

func (s *server) listUsers(ctx context.Context, _ *struct{}) (*usersOutput, error) {
	a := authFrom(ctx)
	us, err := s.st.ListUsers(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	out := &usersOutput{}
	out.Body.Users = make([]User, 0, len(us))
	for _, u := range us {
		out.Body.Users = append(out.Body.Users, userView(u))
	}
	return out, nil
}

type createUserInput struct {
	Body struct {
		DisplayName string `json:"display_name" minLength:"1" maxLength:"100" doc:"Not blank; no control characters or line breaks."`
		Department  string `json:"department,omitempty" maxLength:"100"`
		Timezone    string `json:"timezone,omitempty" maxLength:"64" doc:"An IANA zone such as Europe/Paris; empty: none."`
		Role        string `json:"role,omitempty" enum:"admin,member" default:"member"`
	}
}

type newUserOutput struct {
	Body struct {
		User User `json:"user"`
		LoginLink
	}
}

func (s *server) createUser(ctx context.Context, in *createUserInput) (*newUserOutput, error) {
	a := authFrom(ctx)
	now := s.now()
	b := in.Body
	u := store.User{ID: agent.NewID("usr_"), OrgID: a.OrgID, Role: b.Role, CreatedAt: now, UpdatedAt: now}
	if u.Role == "" {
		u.Role = store.RoleMember
	}
	if err := (profileChange{DisplayName: &b.DisplayName, Department: &b.Department, Timezone: &b.Timezone}).apply(&u); err != nil {
		return nil, err
	}
	// One write: a link that cannot be stored leaves no user behind for a
	// retry to duplicate.
	secret, link := NewSecret(), loginLink(a.OrgID, u.ID, now)
	link.Hash = HashSecret(secret)
	if err := s.st.CreateUser(ctx, u, link); err != nil {
		return nil, err
	}
	out := &newUserOutput{}
	out.Body.User, out.Body.LoginLink = userView(u), loginLinkView(secret, link.ExpiresAt)
	return out, nil
}

type userPath struct {
	ID string `path:"id" doc:"The user's id."`
}

type updateUserInput struct {
	ID   string `path:"id" doc:"The user's id."`
	Body struct {
		// The profile's fields, as in profileChange (huma documents no
		// unexported embedded struct).
		DisplayName *string `json:"display_name,omitempty" minLength:"1" maxLength:"100" doc:"Not blank; no control characters or line breaks."`
		Department  *string `json:"department,omitempty" maxLength:"100"`
		Timezone    *string `json:"timezone,omitempty" maxLength:"64" doc:"An IANA zone such as Europe/Paris; empty clears it."`
		Role        *string `json:"role,omitempty" enum:"admin,member"`
	}
}

type userOutput struct{ Body User }

func (s *server) updateUser(ctx context.Context, in *updateUserInput) (*userOutput, error) {
	a := authFrom(ctx)
	b := in.Body
	p := profileChange{DisplayName: b.DisplayName, Department: b.Department, Timezone: b.Timezone}
	// Read, changed and written in one store transaction: a concurrent
	// edit of another field is never written back as it was.
	u, err := s.st.ModifyUser(ctx, a.OrgID, in.ID, s.now(), func(u *store.User) error {
		if err := p.apply(u); err != nil {
			return err
		}
		if b.Role != nil {
			u.Role = *b.Role
		}
		return nil
	})
	if err != nil {
		return nil, userError(err)
	}
	return &userOutput{Body: userView(u)}, nil
}

// userError maps the store's sentinels of user writes to statuses.
func userError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errNoUser
	case errors.Is(err, store.ErrLastAdmin):
		return apiErr(http.StatusConflict, "last_admin", "this is the organisation's last admin: make another user an admin first")
	}
	return err
}

func (s *server) disableUser(ctx context.Context, in *userPath) (*struct{}, error) {
	a := authFrom(ctx)
	if in.ID == a.UserID {
		return nil, apiErr(http.StatusBadRequest, "cannot_disable_self", "you cannot disable yourself; another admin can")
	}
	if _, err := s.orgUser(ctx, a, in.ID); err != nil {
		return nil, err
	}
	if err := s.st.DisableUser(ctx, a.OrgID, in.ID, s.now()); err != nil {
		return nil, userError(err)
	}
	s.turns.cancelUser(userKey(a.OrgID, in.ID))
	return nil, nil
}

// enableUser answers the user as stored after enabling, UpdatedAt
// included (unchanged when they were enabled already).
func (s *server) enableUser(ctx context.Context, in *userPath) (*userOutput, error) {
	a := authFrom(ctx)
	if err := s.st.EnableUser(ctx, a.OrgID, in.ID, s.now()); err != nil {
		return nil, userError(err)
	}
	u, err := s.orgUser(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	return &userOutput{Body: userView(u)}, nil
}

type loginLinkOutput struct{ Body LoginLink }

var errUserDisabled = apiErr(http.StatusConflict, "user_disabled", "this user is disabled: enable them first")

func (s *server) createLoginLink(ctx context.Context, in *userPath) (*loginLinkOutput, error) {
	a := authFrom(ctx)
	u, err := s.orgUser(ctx, a, in.ID)
	if err != nil {
		return nil, err
	}
	if !u.DisabledAt.IsZero() {
		return nil, errUserDisabled
	}
	secret, expires, err := IssueLoginLink(ctx, s.st, a.OrgID, u.ID, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUserDisabled // disabled meanwhile
	}
	if err != nil {
		return nil, err
	}
	return &loginLinkOutput{Body: loginLinkView(secret, expires)}, nil
}
