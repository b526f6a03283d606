package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func openConfined(t *testing.T, e *env, cfg Config) *Confined {
	t.Helper()
	cfg.Root = e.root
	c, err := Open(context.Background(), cfg, e.scope)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConfinedReadWriteList(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("data/in.csv", "a,b\n", "top.txt", "x")
	c := openConfined(t, e, Config{})
	if err := c.WriteFile("out/./sum.json", []byte(`{"sum":3}`)); err != nil {
		t.Fatal(err)
	}
	// A script may replace a file of any length: no rewrite limit.
	long := strings.Repeat("y", maxRewriteLen+10)
	for range 2 {
		if err := c.WriteFile("long.txt", []byte(long)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.ReadFile("out/sum.json")
	if err != nil || string(got) != `{"sum":3}` {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	names, err := c.ListFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"data/in.csv", "long.txt", "out/sum.json", "top.txt"}, names); diff != "" {
		t.Errorf("ListFiles(.) (-want +got):\n%s", diff)
	}
	if names, _ := c.ListFiles("data"); !cmp.Equal(names, []string{"data/in.csv"}) {
		t.Errorf("ListFiles(data) = %q", names)
	}
}

func TestConfinedRefuses(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("big.txt", strings.Repeat("z", 200), "full.txt", strings.Repeat("f", 500))
	outside := filepath.Join(filepath.Dir(e.root), "secret")
	if err := os.WriteFile(outside, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.dir(), "link")); err != nil {
		t.Fatal(err)
	}
	c := openConfined(t, e, Config{MaxFileBytes: 100, MaxWorkspaceBytes: 750, MaxFiles: 4})
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"absolute", func() error { _, err := c.ReadFile("/etc/passwd"); return err }, "is an absolute path"},
		{"parent", func() error { return c.WriteFile("../x", nil) }, "leads outside the workspace"},
		{"link out", func() error { _, err := c.ReadFile("link"); return err }, "leads outside the workspace"},
		{"reserved", func() error { return c.WriteFile(".quiver-lock", nil) }, "reserved"},
		{"read over the file quota", func() error { _, err := c.ReadFile("big.txt"); return err }, "files over 100 bytes cannot be read"},
		{"per-file quota", func() error { return c.WriteFile("a.txt", make([]byte, 101)) }, "per-file quota"},
		{"workspace quota", func() error { return c.WriteFile("b.txt", make([]byte, 100)) }, "workspace quota"},
		{"list a file", func() error { _, err := c.ListFiles("big.txt"); return err }, "not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want it to say %q", err, tt.want)
			}
		})
	}
	for _, name := range []string{"a.txt", "b.txt", "x"} {
		if _, err := os.Stat(filepath.Join(e.dir(), name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

func TestConfinedFileCountQuota(t *testing.T) {
	e := newEnv(t, Config{})
	c := openConfined(t, e, Config{MaxFiles: 2})
	for _, name := range []string{"1", "2"} {
		if err := c.WriteFile(name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WriteFile("3", []byte("x")); err == nil || !strings.Contains(err.Error(), "file-count quota") {
		t.Errorf("third file: err = %v; want the file-count quota", err)
	}
}
