package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRemove deletes one person's workspace, files and folders in it,
// and leaves the others' (the same user ID in another organisation
// included) and whatever a link inside it points at.
func TestRemove(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "keep.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"acme/ana/notes/todo.md", "acme/bo/a.txt", "other/ana/b.txt"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "acme", "ana", "link")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(root, "acme", "ana"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "acme", "ana")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the erased workspace: %v, want it gone", err)
	}
	for _, p := range []string{"acme/bo/a.txt", "other/ana/b.txt", outside} {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, filepath.FromSlash(p))
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s after Remove: %v, want it kept", p, err)
		}
	}
	if err := Remove(root, "acme", "ana"); err != nil {
		t.Errorf("Remove of a workspace gone already: %v", err)
	}
	if err := Remove(filepath.Join(root, "missing"), "acme", "ana"); err != nil {
		t.Errorf("Remove under a root never made: %v", err)
	}
	for _, tc := range []struct{ org, user string }{{"acme", ".."}, {"acme", "a/b"}, {"..", "acme"}, {"acme", ""}} {
		if err := Remove(root, tc.org, tc.user); err == nil {
			t.Errorf("Remove(%q, %q) = nil, want an error", tc.org, tc.user)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "acme", "bo", "a.txt")); err != nil {
		t.Errorf("after refused removes: %v", err)
	}
}
