package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/quiverhq/quiver/builtin/workspace"
)

func TestReadPersonFile(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "org_a", "alice")
	if err := os.MkdirAll(filepath.Join(home, "charts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "charts", "sales.png"), []byte("png"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secret"), filepath.Join(home, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".quiver-lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := workspace.ReadPersonFile(ctx, root, "org_a", "alice", "charts/sales.png")
	if err != nil || string(got) != "png" {
		t.Fatalf("own file: %q, %v", got, err)
	}
	for _, tc := range []struct{ org, user, path string }{
		{"org_a", "alice", "../bob/x"},
		{"org_a", "alice", "/etc/passwd"},
		{"org_a", "alice", "escape"},
		{"org_a", "alice", "charts"},
		{"org_a", "alice", "missing.png"},
		{"org_a", "bob", "charts/sales.png"},
		{"org_a", "../org_a/alice", "charts/sales.png"},
	} {
		if got, err := workspace.ReadPersonFile(ctx, root, tc.org, tc.user, tc.path); err == nil {
			t.Errorf("%s/%s %q read %q", tc.org, tc.user, tc.path, got)
		}
	}
	if _, err := workspace.ReadPersonFile(ctx, root, "org_a", "bob", "x"); !errors.Is(err, workspace.ErrNoFile) {
		t.Errorf("a workspace never made: %v, want ErrNoFile", err)
	}
	if _, err := os.Stat(filepath.Join(root, "org_a", "bob")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading made bob's workspace: %v", err)
	}
}
