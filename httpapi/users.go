package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/builtin/workspace"
	"github.com/quiverhq/quiver/store"
)

// The people of an organisation, administered by its admins. Disabling
// keeps a user's conversations and records, and deletes every credential
// they hold; enabling lets them back in with a new login link. Erasing
// deletes the user and everything of theirs for good.
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
		OperationID: "erase-user", Method: http.MethodPost, Path: "/api/users/{id}/erase", Tags: tags,
		Summary: "Erase a user and everything of theirs, for good",
		Description: "In one transaction: the user, their sessions, API tokens and login links, every conversation of " +
			"theirs with everything DELETE /api/conversations/{id} deletes, their personal memories, their files, their " +
			"Deliberate Tool Mode choice and their own budget. Then their workspace folder is removed. Usage records stay, " +
			"detached from the person: they are what the organisation spent, and its budget for the month still counts " +
			"them. Shared memories stay. There is no undo; to keep their records, disable them instead (DELETE " +
			"/api/users/{id}). Yourself: 400 cannot_erase_self; the organisation's last enabled admin: 409 last_admin; " +
			"409 turn_running while a turn of theirs runs (cancel it or wait, then erase); each erasing nothing.",
		DefaultStatus: http.StatusNoContent,
		Errors:        []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
	}, adminOnly, s.eraseUser)
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

// LoginLink is a login link just made: shown once.
type LoginLink struct {
	LoginLink string    `json:"login_link" doc:"The path to open on this server (/login?token=…); works once." example:"/login?token=…"`
	ExpiresAt time.Time `json:"expires_at"`
}

func loginLinkView(l accounts.LoginLink) LoginLink {
	return LoginLink{LoginLink: "/login?token=" + l.Secret, ExpiresAt: l.ExpiresAt}
}

// profileChange is what may change about a user's profile; absent fields
// keep their value (accounts.Profile, with its wire names).
type profileChange struct {
	DisplayName *string `json:"display_name,omitempty" minLength:"1" maxLength:"100" doc:"Not blank; no control characters or line breaks."`
	Department  *string `json:"department,omitempty" maxLength:"100"`
	Timezone    *string `json:"timezone,omitempty" maxLength:"64" doc:"An IANA zone such as Europe/Paris; empty clears it."`
}

func (p profileChange) profile() accounts.Profile {
	return accounts.Profile{DisplayName: p.DisplayName, Department: p.Department, Timezone: p.Timezone}
}

var errNoUser = notFound("no such user")

// accountError maps the accounts' errors to statuses: bad input 400
// (bad_timezone for a timezone), no such user or token 404, the last
// admin 409 last_admin, a disabled user 409 user_disabled, disabling
// yourself 400; anything else passes unchanged (nil included).
func accountError(err error) error {
	var bad *accounts.InvalidError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad) && bad.Field == "timezone":
		return apiErr(http.StatusBadRequest, "bad_timezone", bad.Msg)
	case bad != nil:
		return badRequest(bad.Msg)
	case errors.Is(err, accounts.ErrNoUser):
		return errNoUser
	case errors.Is(err, accounts.ErrNoToken):
		return notFound("no such token")
	case errors.Is(err, accounts.ErrLastAdmin):
		return apiErr(http.StatusConflict, "last_admin", "this is the organisation's last admin: make another user an admin first")
	case errors.Is(err, accounts.ErrUserDisabled):
		return errUserDisabled
	case errors.Is(err, accounts.ErrDisableSelf):
		return apiErr(http.StatusBadRequest, "cannot_disable_self", "you cannot disable yourself; another admin can")
	}
	return err
}

type usersOutput struct {
	Body struct {
		Users []User `json:"users"`
	}
}

func (s *server) listUsers(ctx context.Context, _ *struct{}) (*usersOutput, error) {
	a := authFrom(ctx)
	us, err := s.acc.Users(ctx, a.OrgID)
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
	b := in.Body
	u, link, err := s.acc.CreateUser(ctx, a.OrgID, accounts.NewUser{
		DisplayName: b.DisplayName, Department: b.Department, Timezone: b.Timezone, Role: b.Role,
	})
	if err != nil {
		return nil, accountError(err)
	}
	out := &newUserOutput{}
	out.Body.User, out.Body.LoginLink = userView(u), loginLinkView(link)
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
	u, err := s.acc.UpdateUser(ctx, a.OrgID, in.ID, p.profile(), b.Role)
	if err != nil {
		return nil, accountError(err)
	}
	return &userOutput{Body: userView(u)}, nil
}

func (s *server) disableUser(ctx context.Context, in *userPath) (*struct{}, error) {
	a := authFrom(ctx)
	if err := s.acc.DisableUser(ctx, a.OrgID, a.UserID, in.ID); err != nil {
		return nil, accountError(err)
	}
	s.turns.cancelUser(userKey(a.OrgID, in.ID))
	if err := s.runs.CancelUser(ctx, a.OrgID, in.ID); err != nil {
		// The user is disabled and this server's runs of theirs are
		// cancelled; the ones on other replicas may go on, so say so.
		return nil, err
	}
	return nil, nil
}

var (
	errEraseSelf    = apiErr(http.StatusBadRequest, "cannot_erase_self", "you cannot erase yourself; another admin can")
	errEraseRunning = apiErr(http.StatusConflict, "turn_running", "a turn of this user is running; cancel it or wait, then erase")
)

// eraseUser erases the user in the store, then cancels what this server
// still runs for them (a console run; a turn whose request authenticated
// before the erase, on any replica) and removes their workspace folder.
func (s *server) eraseUser(ctx context.Context, in *userPath) (*struct{}, error) {
	a := authFrom(ctx)
	if in.ID == a.UserID {
		return nil, errEraseSelf
	}
	switch err := s.st.EraseUser(ctx, a.OrgID, in.ID); {
	case errors.Is(err, store.ErrNotFound):
		return nil, errNoUser
	case errors.Is(err, store.ErrLastAdmin):
		return nil, accountError(accounts.ErrLastAdmin)
	case errors.Is(err, store.ErrTurnRunning):
		return nil, errEraseRunning
	case err != nil:
		return nil, err
	}
	s.turns.cancelUser(userKey(a.OrgID, in.ID))
	if err := s.runs.CancelUser(ctx, a.OrgID, in.ID); err != nil {
		return nil, err
	}
	if s.workspaces == "" {
		return nil, nil
	}
	if err := workspace.Remove(s.workspaces, a.OrgID, in.ID); err != nil {
		// The user is erased; say that their files are not.
		return nil, fmt.Errorf("the user is erased but their workspace folder is not removed: %w", err)
	}
	return nil, nil
}

// enableUser answers the user as stored after enabling, UpdatedAt
// included (unchanged when they were enabled already).
func (s *server) enableUser(ctx context.Context, in *userPath) (*userOutput, error) {
	u, err := s.acc.EnableUser(ctx, authFrom(ctx).OrgID, in.ID)
	if err != nil {
		return nil, accountError(err)
	}
	return &userOutput{Body: userView(u)}, nil
}

type loginLinkOutput struct{ Body LoginLink }

var errUserDisabled = apiErr(http.StatusConflict, "user_disabled", "this user is disabled: enable them first")

func (s *server) createLoginLink(ctx context.Context, in *userPath) (*loginLinkOutput, error) {
	link, err := s.acc.IssueLoginLink(ctx, authFrom(ctx).OrgID, in.ID)
	if err != nil {
		return nil, accountError(err)
	}
	return &loginLinkOutput{Body: loginLinkView(link)}, nil
}
