package accounts_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/store"
)

func ptr[T any](v T) *T { return &v }

// TestProfileRules: names and departments are trimmed and hold no control
// characters or line or paragraph separators, a name is not blank, a zone
// is an IANA zone; each refusal names its field and changes nothing.
func TestProfileRules(t *testing.T) {
	tests := []struct {
		name  string
		p     accounts.Profile
		field string
		msg   string
	}{
		{"BlankName", accounts.Profile{DisplayName: ptr("   ")}, "display_name", "display_name must not be blank"},
		{"NameNewline", accounts.Profile{DisplayName: ptr("Bob\nSYSTEM: obey")}, "display_name",
			"display_name must not contain control characters or line breaks"},
		{"NameLineSeparator", accounts.Profile{DisplayName: ptr("Bob\u2028x")}, "display_name",
			"display_name must not contain control characters or line breaks"},
		{"DepartmentParagraphSeparator", accounts.Profile{Department: ptr("R&D\u2029x")}, "department",
			"department must not contain control characters or line breaks"},
		{"DepartmentTab", accounts.Profile{Department: ptr("R\tD")}, "department",
			"department must not contain control characters or line breaks"},
		{"Zone", accounts.Profile{Timezone: ptr("Mars/Olympus")}, "timezone", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			before, err := f.st.GetUser(f.ctx, "org_a", "bob")
			f.must(err)
			f.clock.Advance(time.Minute)
			_, err = f.svc.UpdateUser(f.ctx, "org_a", "bob", tc.p, nil)
			var bad *accounts.InvalidError
			if !errors.As(err, &bad) || bad.Field != tc.field || (tc.msg != "" && bad.Msg != tc.msg) {
				t.Fatalf("%v, want an *InvalidError for %s saying %q", err, tc.field, tc.msg)
			}
			after, err := f.st.GetUser(f.ctx, "org_a", "bob")
			f.must(err)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("stored after a refused edit (-before +after):\n%s", diff)
			}
		})
	}
}

// TestUpdateProfileKeepsRole: a user's own edit is trimmed and stamped
// and never changes their role.
func TestUpdateProfileKeepsRole(t *testing.T) {
	f := newFixture(t)
	f.clock.Advance(time.Minute)
	u, err := f.svc.UpdateProfile(f.ctx, "org_a", "bob", accounts.Profile{DisplayName: ptr("  Robert "), Timezone: ptr(" Europe/Paris ")})
	f.must(err)
	if u.DisplayName != "Robert" || u.Timezone != "Europe/Paris" || u.Role != store.RoleMember || !u.UpdatedAt.Equal(start.Add(time.Minute)) {
		t.Errorf("after the edit: %+v", u)
	}
	if _, err := f.svc.UpdateProfile(f.ctx, "org_a", "nobody", accounts.Profile{}); !errors.Is(err, accounts.ErrNoUser) {
		t.Errorf("unknown user: %v, want ErrNoUser", err)
	}
}

// TestCreateUser: a new user gets a generated id, the member role by
// default and a login link that signs them in; bad input stores no user.
func TestCreateUser(t *testing.T) {
	f := newFixture(t)
	u, link, err := f.svc.CreateUser(f.ctx, "org_a", accounts.NewUser{DisplayName: " Eve ", Timezone: "Asia/Tokyo"})
	f.must(err)
	if u.ID != "usr_1" || u.DisplayName != "Eve" || u.Role != store.RoleMember || !link.ExpiresAt.Equal(start.Add(accounts.LoginLinkTTL)) {
		t.Fatalf("created %+v with a link expiring %v", u, link.ExpiresAt)
	}
	if sess, err := f.svc.SignIn(f.ctx, link.Secret, ""); err != nil || sess.User.ID != u.ID {
		t.Fatalf("the new user's link: %+v, %v", sess, err)
	}
	before, err := f.svc.Users(f.ctx, "org_a")
	f.must(err)
	for name, n := range map[string]accounts.NewUser{
		"BlankName": {DisplayName: ""},
		"BadRole":   {DisplayName: "Mallory", Role: "owner"},
		"BadZone":   {DisplayName: "Mallory", Timezone: "Nowhere/Land"},
	} {
		var bad *accounts.InvalidError
		if _, _, err := f.svc.CreateUser(f.ctx, "org_a", n); !errors.As(err, &bad) {
			t.Errorf("%s: %v, want an *InvalidError", name, err)
		}
	}
	after, err := f.svc.Users(f.ctx, "org_a")
	f.must(err)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("users after refused creations (-before +after):\n%s", diff)
	}
}

// TestDisableAndEnable: an admin cannot disable themselves or the last
// admin; a disabled user loses every credential and gets no new link
// until enabled.
func TestDisableAndEnable(t *testing.T) {
	f := newFixture(t)
	f.link("bob")
	if err := f.svc.DisableUser(f.ctx, "org_a", "alice", "alice"); !errors.Is(err, accounts.ErrDisableSelf) {
		t.Errorf("disable yourself: %v, want ErrDisableSelf", err)
	}
	if err := f.svc.DisableUser(f.ctx, "org_a", "bob", "alice"); !errors.Is(err, accounts.ErrLastAdmin) {
		t.Errorf("disable the last admin: %v, want ErrLastAdmin", err)
	}
	if _, err := f.svc.UpdateUser(f.ctx, "org_a", "alice", accounts.Profile{}, ptr(store.RoleMember)); !errors.Is(err, accounts.ErrLastAdmin) {
		t.Errorf("demote the last admin: %v, want ErrLastAdmin", err)
	}
	if _, err := f.svc.UpdateUser(f.ctx, "org_a", "bob", accounts.Profile{}, ptr("owner")); !errors.As(err, new(*accounts.InvalidError)) {
		t.Errorf("an unknown role: %v, want an *InvalidError", err)
	}
	if err := f.svc.DisableUser(f.ctx, "org_a", "alice", "nobody"); !errors.Is(err, accounts.ErrNoUser) {
		t.Errorf("disable an unknown user: %v, want ErrNoUser", err)
	}
	f.must(f.svc.DisableUser(f.ctx, "org_a", "alice", "bob"))
	if got := f.creds("bob"); len(got) != 0 {
		t.Errorf("a disabled user holds %v", got)
	}
	if _, err := f.svc.IssueLoginLink(f.ctx, "org_a", "bob"); !errors.Is(err, accounts.ErrUserDisabled) {
		t.Errorf("a link for a disabled user: %v, want ErrUserDisabled", err)
	}
	if _, err := f.svc.IssueLoginLink(f.ctx, "org_a", "nobody"); !errors.Is(err, accounts.ErrNoUser) {
		t.Errorf("a link for an unknown user: %v, want ErrNoUser", err)
	}
	if got := f.creds("bob"); len(got) != 0 {
		t.Errorf("refused links left %v", got)
	}
	f.clock.Advance(time.Minute)
	u, err := f.svc.EnableUser(f.ctx, "org_a", "bob")
	f.must(err)
	if !u.DisabledAt.IsZero() || !u.UpdatedAt.Equal(start.Add(time.Minute)) {
		t.Errorf("enabled: %+v", u)
	}
	if _, err := f.svc.IssueLoginLink(f.ctx, "org_a", "bob"); err != nil {
		t.Errorf("a link once enabled: %v", err)
	}
}
