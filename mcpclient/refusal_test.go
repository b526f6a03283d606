package mcpclient

import (
	"errors"
	"fmt"
	"testing"

	"github.com/quiverhq/quiver/store"
)

// TestRefusal: a refusal, wrapped or not, gives its message and the store
// rule behind it, if any; a failure that is no refusal gives nothing.
func TestRefusal(t *testing.T) {
	field := refusef("url: public mode needs an https URL")
	taken := storeRefusal(store.ErrNameTaken, "docs", "", 10)
	for _, tc := range []struct {
		name    string
		err     error
		wantMsg string
		rule    error
		ok      bool
	}{
		{"field", field, "url: public mode needs an https URL", nil, true},
		{"store rule", taken, `name: "docs" is already registered`, store.ErrNameTaken, true},
		{"wrapped", fmt.Errorf("add server: %w", taken), `name: "docs" is already registered`, store.ErrNameTaken, true},
		{"not found", storeRefusal(store.ErrNotFound, "gone", "", 10), `no server named "gone"`, store.ErrNotFound, true},
		{"failure", errors.New("database is locked"), "", nil, false},
		{"bare store error", store.ErrNameTaken, "", nil, false},
		{"nil", nil, "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, rule, ok := Refusal(tc.err)
			if msg != tc.wantMsg || rule != tc.rule || ok != tc.ok {
				t.Errorf("Refusal = %q, %v, %v; want %q, %v, %v", msg, rule, ok, tc.wantMsg, tc.rule, tc.ok)
			}
		})
	}
}
