package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/intent"
)

// TestTriggersMessages: quiver triggers refuses with the messages the API
// gives (package deliberate's), exit 2; bad input opens no store, so a
// data folder that does not exist yet stays absent; --history -1 is the
// default depth, as the API's history_turns -1 is.
func TestTriggersMessages(t *testing.T) {
	data := t.TempDir()
	if code, _, stderr := run(t, data, "triggers", "add", "--server", "Acme", "--target", "image", "PFP"); code != 0 {
		t.Fatalf("add: %d %s", code, stderr)
	}
	for i := 1; i < intent.MaxCustomPerTarget; i++ {
		if code, _, stderr := run(t, data, "triggers", "add", "--server", "Acme", "--target", "image", fmt.Sprintf("pic %d", i)); code != 0 {
			t.Fatalf("add %d: %d %s", i, code, stderr)
		}
	}
	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"add", "--target", "image", "pfp"}, `triggers add: "pfp" is already a image trigger`},
		{[]string{"add", "--target", "image", "one more"}, fmt.Sprintf("triggers add: image already has %d custom triggers (the limit)", intent.MaxCustomPerTarget)},
		{[]string{"remove", "--target", "image", "nope"}, `triggers remove: no image trigger "nope"`},
		{[]string{"add", "--target", "teleport", "beam"}, `triggers add: unknown target "teleport"`},
		{[]string{"mode", "on", "--history", "11"}, "triggers mode: --history: history turns 11: use 0–10, or -1 for the default"},
	}
	for _, r := range refusals {
		args := append([]string{"triggers", r.args[0], "--server", "Acme"}, r.args[1:]...)
		if code, _, stderr := run(t, data, args...); code != 2 || !strings.Contains(stderr, r.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", r.args, code, stderr, r.want)
		}
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	for _, args := range [][]string{
		{"triggers", "add", "--server", "Acme", "--target", "image", "a(b"},
		{"triggers", "mode", "--server", "Acme", "on", "--history", "-2"},
		{"triggers", "user", "--server", "Acme", "--user", "ana", "sometimes"},
	} {
		if code, _, _ := run(t, fresh, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if _, err := os.Stat(fresh); !os.IsNotExist(err) {
			t.Fatalf("%v: the data folder exists after bad input (%v)", args, err)
		}
	}
	if code, out, stderr := run(t, data, "triggers", "mode", "--server", "Acme", "on", "--history", "-1"); code != 0 || !strings.Contains(out, "history: default 4") {
		t.Errorf("--history -1: %d %q %q, want the default depth", code, out, stderr)
	}
}
