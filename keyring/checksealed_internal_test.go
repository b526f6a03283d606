package keyring

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/secret"
)

// TestCheckSealed: a keyring check read from elsewhere (an archive)
// passes only with a keyring that opens it; no check passes any.
func TestCheckSealed(t *testing.T) {
	sealed, err := ringA(t).Seal([]byte(keyCheckPlaintext), []byte(keyCheckAAD))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ringA(t).Seal([]byte("an MCP token"), []byte(keyCheckAAD))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		kr     *secret.Keyring
		sealed string
		want   string // "" for no error
	}{
		{"SameKeyring", ringA(t), sealed, ""},
		{"NoCheck", nil, "", ""},
		{"NoCheckAnyKeyring", ringB(t), "", ""},
		{"OtherKeyring", ringB(t), sealed, "the configured keys (b) cannot open this database's secrets (sealed under key a)"},
		{"NoKeyring", nil, sealed, "sealed with a keyring (key a) but no encryption key is configured"},
		{"NotTheCheck", ringA(t), other, "holds an unexpected value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSealed(tc.kr, tc.sealed)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("CheckSealed: %v; want %q", err, tc.want)
			}
		})
	}
}
