package deliberate_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/deliberate"
)

// TestWriteTriggers: triggers are a table of families and phrases, in
// order; none is one line naming the community.
func TestWriteTriggers(t *testing.T) {
	var b strings.Builder
	ts := []deliberate.Trigger{{Target: "web", Phrase: "look it up"}, {Target: "calculate", Phrase: "^"}}
	if err := deliberate.WriteTriggers(&b, "acme", ts); err != nil {
		t.Fatal(err)
	}
	if want := "FAMILY     PHRASE\nweb        look it up\ncalculate  ^\n"; b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := deliberate.WriteTriggers(&b, "acme", nil); err != nil || b.String() != "no custom triggers for acme\n" {
		t.Errorf("no triggers: %q, %v", b.String(), err)
	}
}
