package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/quiverhq/quiver/store"
	"github.com/quiverhq/quiver/turn"
)

// Profile is a change to a user's profile: nil fields keep their value.
type Profile struct {
	// DisplayName is trimmed; it must not be blank.
	DisplayName *string
	// Department is trimmed; empty clears it.
	Department *string
	// Timezone is an IANA zone such as Europe/Paris; empty clears it.
	Timezone *string
}

// Apply validates p and writes it into u. The name and the department
// must hold no control characters or line or paragraph separators: they go
// into a turn's context message, where a line break would let them pose
// as another line. A bad field is an *InvalidError and u is then only
// partly changed: apply it to a copy, or inside a write that is dropped.
func (p Profile) Apply(u *store.User) error {
	if p.DisplayName != nil {
		v, err := profileText("display_name", *p.DisplayName)
		if err != nil {
			return err
		}
		if v == "" {
			return invalid("display_name", "display_name must not be blank")
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
				return invalid("timezone", "timezone: "+err.Error())
			}
		}
		u.Timezone = v
	}
	return nil
}

// profileText trims a profile field and refuses control characters and
// line or paragraph separators.
func profileText(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if strings.IndexFunc(v, breaksLine) >= 0 {
		return "", invalid(field, field+" must not contain control characters or line breaks")
	}
	return v, nil
}

func breaksLine(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) }

// checkRole refuses a role other than store.RoleAdmin and RoleMember.
func checkRole(role string) error {
	if role != store.RoleAdmin && role != store.RoleMember {
		return invalid("role", fmt.Sprintf("role %q: use admin or member", role))
	}
	return nil
}

// NewUser is a person to add to an organisation.
type NewUser struct {
	DisplayName string
	Department  string
	Timezone    string
	// Role is store.RoleAdmin or RoleMember; "" means RoleMember.
	Role string
}

// CreateUser adds a user with a generated id ("usr_…") and their first
// login link, in one write: a link that cannot be stored leaves no user
// behind for a retry to duplicate. Bad input is an *InvalidError, writing
// nothing.
func (s *Service) CreateUser(ctx context.Context, orgID string, n NewUser) (store.User, LoginLink, error) {
	now := s.now()
	u := store.User{ID: s.newID("usr_"), OrgID: orgID, Role: n.Role, CreatedAt: now, UpdatedAt: now}
	if u.Role == "" {
		u.Role = store.RoleMember
	}
	if err := checkRole(u.Role); err != nil {
		return store.User{}, LoginLink{}, err
	}
	p := Profile{DisplayName: &n.DisplayName, Department: &n.Department, Timezone: &n.Timezone}
	if err := p.Apply(&u); err != nil {
		return store.User{}, LoginLink{}, err
	}
	secret, link := s.secret(), loginLink(orgID, u.ID, now)
	link.Hash = HashSecret(secret)
	if err := s.Store.CreateUser(ctx, u, link); err != nil {
		return store.User{}, LoginLink{}, fmt.Errorf("create user: %w", err)
	}
	return u, LoginLink{Secret: secret, ExpiresAt: link.ExpiresAt}, nil
}

// User returns the organisation's user with that id, or ErrNoUser.
func (s *Service) User(ctx context.Context, orgID, id string) (store.User, error) {
	u, err := s.Store.GetUser(ctx, orgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.User{}, ErrNoUser
	case err != nil:
		return store.User{}, fmt.Errorf("read user: %w", err)
	}
	return u, nil
}

// Users lists the organisation's users, disabled ones included, by id.
func (s *Service) Users(ctx context.Context, orgID string) ([]store.User, error) {
	us, err := s.Store.ListUsers(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return us, nil
}

// Org returns the organisation with that id; an unknown one wraps
// store.ErrNotFound.
func (s *Service) Org(ctx context.Context, id string) (store.Org, error) {
	o, err := s.Store.GetOrg(ctx, id)
	if err != nil {
		return store.Org{}, fmt.Errorf("read organisation: %w", err)
	}
	return o, nil
}

// UpdateProfile applies p to the user's own profile, the role left as it
// is stored. See UpdateUser.
func (s *Service) UpdateProfile(ctx context.Context, orgID, id string, p Profile) (store.User, error) {
	return s.modify(ctx, orgID, id, func(u *store.User) error {
		role := u.Role
		err := p.Apply(u)
		u.Role = role
		return err
	})
}

// UpdateUser applies p and, when role is not nil, the role to the user:
// read, changed and written in one transaction, so a concurrent edit of
// another field is never written back as it was read. Bad input is an
// *InvalidError, an unknown user ErrNoUser, demoting the organisation's
// last enabled admin ErrLastAdmin; each writes nothing.
func (s *Service) UpdateUser(ctx context.Context, orgID, id string, p Profile, role *string) (store.User, error) {
	if role != nil {
		if err := checkRole(*role); err != nil {
			return store.User{}, err
		}
	}
	return s.modify(ctx, orgID, id, func(u *store.User) error {
		if err := p.Apply(u); err != nil {
			return err
		}
		if role != nil {
			u.Role = *role
		}
		return nil
	})
}

// modify runs change on the user inside the store's transaction.
func (s *Service) modify(ctx context.Context, orgID, id string, change func(*store.User) error) (store.User, error) {
	u, err := s.Store.ModifyUser(ctx, orgID, id, s.now(), change)
	var bad *InvalidError
	switch {
	case errors.As(err, &bad):
		return store.User{}, bad
	case err != nil:
		return store.User{}, userError("update user", err)
	}
	return u, nil
}

// DisableUser disables the user (by is the admin doing it): every
// credential they hold is deleted at once; their records stay. Disabling
// yourself gives ErrDisableSelf, an unknown user ErrNoUser, the
// organisation's last enabled admin ErrLastAdmin, each writing nothing.
// Disabling a disabled user changes nothing.
func (s *Service) DisableUser(ctx context.Context, orgID, by, id string) error {
	if id == by {
		return ErrDisableSelf
	}
	if _, err := s.User(ctx, orgID, id); err != nil {
		return err
	}
	if err := s.Store.DisableUser(ctx, orgID, id, s.now()); err != nil {
		return userError("disable user", err)
	}
	return nil
}

// EnableUser lets a disabled user back in and returns them as stored
// (UpdatedAt unchanged when they were enabled already). The credentials
// disabling deleted stay deleted: they sign in with a new login link. An
// unknown user gives ErrNoUser.
func (s *Service) EnableUser(ctx context.Context, orgID, id string) (store.User, error) {
	if err := s.Store.EnableUser(ctx, orgID, id, s.now()); err != nil {
		return store.User{}, userError("enable user", err)
	}
	return s.User(ctx, orgID, id)
}

// userError maps the store's sentinels of user writes to ours.
func userError(op string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrNoUser
	case errors.Is(err, store.ErrLastAdmin):
		return ErrLastAdmin
	}
	return fmt.Errorf("%s: %w", op, err)
}
