package app

import (
	"errors"
	"fmt"
	"testing"

	"github.com/quiverhq/quiver/httpapi"
	"github.com/quiverhq/quiver/mcpclient"
	"github.com/quiverhq/quiver/store"
)

// TestAPIMCPRefusal: the API answers a refusal of the input as a bad
// request, keeps a store rule behind a refusal wrapped (httpapi answers
// it 409 or 404) and leaves a failure as it is (a 500).
func TestAPIMCPRefusal(t *testing.T) {
	field := &mcpclient.Error{Msg: "url: public mode needs an https URL"}
	if bad, ok := errors.AsType[*httpapi.BadRequest](refusal(fmt.Errorf("add: %w", field))); !ok || bad.Msg != field.Msg {
		t.Errorf("field refusal = %v, want a bad request with its message", bad)
	}
	taken := &mcpclient.Error{Msg: `name: "docs" is already registered`, Err: store.ErrNameTaken}
	if err := refusal(taken); !errors.Is(err, store.ErrNameTaken) {
		t.Errorf("rule refusal = %v, want store.ErrNameTaken kept", err)
	}
	failure := errors.New("database is locked")
	if err := refusal(failure); err != failure {
		t.Errorf("failure = %v, want it unchanged", err)
	}
	if err := refusal(nil); err != nil {
		t.Errorf("nil = %v", err)
	}
}
