package accounts_test

import (
	"testing"

	"github.com/quiverhq/quiver/accounts"
	"github.com/quiverhq/quiver/internal/config"
)

// TestDefaultExampleIsAValidAgent: the agent a first start stores is a
// valid agent file named as the example says, with a model and the web
// tools.
func TestDefaultExampleIsAValidAgent(t *testing.T) {
	ex := accounts.DefaultExample()
	ag, err := config.ParseAgent(ex.Definition)
	if err != nil {
		t.Fatal(err)
	}
	if ag.Name != ex.Name || ag.Model == "" || len(ag.Tools) != 2 {
		t.Errorf("example %q parses as %+v", ex.Name, ag)
	}
}
