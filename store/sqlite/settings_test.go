package sqlite

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/store"
)

// TestSettingsRefusals checks the settings writes outside the contract:
// each is refused and writes nothing, and an error never quotes a sealed
// value.
func TestSettingsRefusals(t *testing.T) {
	s := openTest(t, t.TempDir())
	if err := s.CreateOrg(t.Context(), store.Org{ID: "org"}); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	held := store.OrgSettings{OrgID: "org", Doc: []byte(`{}`), Secrets: map[string]string{"k": "sealed-k"}}
	if _, err := s.PutOrgSettings(t.Context(), held); err != nil {
		t.Fatalf("PutOrgSettings: %v", err)
	}
	held.Version = 1
	put := func(org string, secrets map[string]string) func() error {
		return func() error {
			_, err := s.PutOrgSettings(t.Context(), store.OrgSettings{OrgID: org, Secrets: secrets, Version: 1})
			return err
		}
	}
	rewrap := func(answer string, err error) func() error {
		return func() error {
			_, rerr := s.RewrapOrgSecrets(t.Context(), func(_, _, _ string) (string, error) { return answer, err })
			return rerr
		}
	}
	tests := []struct {
		name string
		call func() error
		want error // nil: any error
	}{
		{"EmptySecretName", put("org", map[string]string{"": "sealed-x"}), nil},
		{"EmptySealedValue", put("org", map[string]string{"k": "sealed-k", "x": ""}), nil},
		{"UnknownOrg", put("missing", nil), store.ErrNotFound},
		{"RewrapToEmpty", rewrap("", nil), nil},
		{"RewrapFails", rewrap("sealed-new", errors.New("no key")), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want an error wrapping %v", err, tc.want)
			}
			if strings.Contains(err.Error(), "sealed-") {
				t.Errorf("error %q quotes a sealed value", err)
			}
			got, err := s.GetOrgSettings(t.Context(), "org")
			if err != nil || !cmp.Equal(held, got) {
				t.Errorf("GetOrgSettings = %+v, %v; want %+v", got, err, held)
			}
			if got, err := s.GetOrgSettings(t.Context(), "missing"); err != nil || got.Version != 0 {
				t.Errorf("GetOrgSettings of an unknown organisation = %+v, %v; want never saved", got, err)
			}
		})
	}
}

// TestSettingsSchemaChecks checks the schema's backstops for a write that
// skipped the store's checks.
func TestSettingsSchemaChecks(t *testing.T) {
	s := openTest(t, t.TempDir())
	tests := []struct {
		name    string
		q       string
		wantErr bool
	}{
		{"Org", `INSERT INTO orgs VALUES ('org', '', '')`, false},
		{"SecretWithoutSettings", `INSERT INTO org_secrets VALUES ('org', 'k', 'v')`, true},
		{"SettingsOfNoOrg", `INSERT INTO org_settings VALUES ('missing', x'', 1, '')`, true},
		{"VersionZero", `INSERT INTO org_settings VALUES ('org', x'', 0, '')`, true},
		{"NullDoc", `INSERT INTO org_settings VALUES ('org', NULL, 1, '')`, true},
		{"Settings", `INSERT INTO org_settings VALUES ('org', x'', 1, '')`, false},
		{"Secret", `INSERT INTO org_secrets VALUES ('org', 'k', 'v')`, false},
		{"SecretTwice", `INSERT INTO org_secrets VALUES ('org', 'k', 'w')`, true},
		{"EmptyName", `INSERT INTO org_secrets VALUES ('org', '', 'v')`, true},
		{"EmptySealed", `INSERT INTO org_secrets VALUES ('org', 'e', '')`, true},
	}
	for _, tc := range tests {
		_, err := s.writer.ExecContext(t.Context(), tc.q)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
}
