package workspace

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "plain", in: "notes.md", want: "notes.md"},
		{name: "nested", in: "a/b/c.txt", want: "a/b/c.txt"},
		{name: "dot slash", in: "./a//b/", want: "a/b"},
		{name: "dotdot inside", in: "a/../b.txt", want: "b.txt"},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "dotdot", in: "..", wantErr: "outside the workspace"},
		{name: "dotdot escape", in: "../secret", wantErr: "outside the workspace"},
		{name: "nested escape", in: "a/../../secret", wantErr: "outside the workspace"},
		{name: "absolute", in: "/etc/passwd", wantErr: "absolute path"},
		{name: "nul", in: "a\x00b", wantErr: "control character"},
		{name: "newline", in: "a\nb", wantErr: "control character"},
		{name: "too long", in: strings.Repeat("a/", 600), wantErr: "limit is 1024"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cleanPath(tc.in)
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr)
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("cleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// hostile builds a workspace full of things that lead outside it, next to
// an outside folder holding a secret. It returns the secret's path.
func hostile(t *testing.T, e *env) string {
	t.Helper()
	outside := filepath.Join(filepath.Dir(e.root), "outside")
	secret := filepath.Join(outside, "secret.txt")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("TOPSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := e.dir()
	e.put("real.txt", "real content\n", "sub/inner.txt", "inner content\n")
	rel, err := filepath.Rel(dir, secret)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(rel, filepath.Join(dir, "rel-out")))
	must(t, os.Symlink(secret, filepath.Join(dir, "abs-out")))
	must(t, os.Symlink(outside, filepath.Join(dir, "dir-out")))
	must(t, os.Symlink("real.txt", filepath.Join(dir, "in-link")))
	must(t, os.Symlink("../real.txt", filepath.Join(dir, "sub", "up-link")))
	must(t, os.Link(secret, filepath.Join(dir, "hard-out")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	ln, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return secret
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPathSafety(t *testing.T) {
	e := newEnv(t, Config{})
	secret := hostile(t, e)
	// A device node needs privileges; the case runs where mknod works.
	device := syscall.Mknod(filepath.Join(e.dir(), "dev"), syscall.S_IFCHR|0o600, 1<<8|3) == nil

	refused := []struct {
		name, path, want string
	}{
		{"dotdot", "../outside/secret.txt", "outside the workspace"},
		{"deep dotdot", "sub/../../outside/secret.txt", "outside the workspace"},
		{"absolute", "/etc/passwd", "absolute path"},
		{"absolute to secret", secret, "absolute path"},
		{"relative symlink out", "rel-out", "outside the workspace"},
		{"absolute symlink out", "abs-out", "outside the workspace"},
		{"through symlinked folder", "dir-out/secret.txt", "outside the workspace"},
		{"hard link out", "hard-out", "2 hard links"},
		{"fifo", "fifo", "named pipe"},
		{"socket", "sock", "a socket"},
		{"folder", "sub", "a folder"},
		{"device", "dev", "a device"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "device" && !device {
				t.Skip("mknod not permitted here")
			}
			p := jsonArgs(t, tc.path)
			calls := []struct{ tool, args string }{
				{"read_file", `{"path":` + p + `}`},
				{"write_file", `{"files":[{"path":` + p + `,"content":"pwned"}]}`},
				{"edit_file", `{"path":` + p + `,"old_string":"TOPSECRET","new_string":"pwned"}`},
				{"delete_file", `{"path":` + p + `}`},
			}
			for _, c := range calls {
				out, err := e.call(c.tool, c.args)
				if err == nil {
					t.Errorf("%s %s succeeded: %q", c.tool, tc.path, out)
					continue
				}
				wantErr(t, err, tc.want)
				if !filepath.IsAbs(tc.path) && strings.Contains(err.Error(), filepath.Dir(e.root)) {
					t.Errorf("%s %s: error %q reveals a host path", c.tool, tc.path, err)
				}
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "TOPSECRET\n" {
		t.Errorf("secret changed to %q", b)
	}
	for _, name := range []string{"rel-out", "abs-out", "hard-out", "fifo", "sock"} {
		if _, err := os.Lstat(filepath.Join(e.dir(), name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

func TestSymlinkInsideAllowed(t *testing.T) {
	e := newEnv(t, Config{})
	hostile(t, e)
	for _, p := range []string{"in-link", "sub/up-link"} {
		got := e.mustCall("read_file", `{"path":"`+p+`"}`)
		if want := "[" + p + ": lines 1-1 of 1]\nreal content"; got != want {
			t.Errorf("read_file %s = %q, want %q", p, got, want)
		}
	}
	// Writing through a link would replace the link; it is refused by name.
	_, err := e.call("edit_file", `{"path":"in-link","old_string":"real","new_string":"fake"}`)
	wantErr(t, err, "in-link is a symbolic link to real.txt")
}

func TestFoldersOutsideRefused(t *testing.T) {
	e := newEnv(t, Config{})
	hostile(t, e)
	for _, tc := range []struct{ tool, args string }{
		{"list_files", `{"folder":"dir-out"}`},
		{"list_files", `{"folder":"../"}`},
		{"search_files", `{"queries":["TOP"],"folder":"dir-out"}`},
		{"search_files", `{"queries":["TOP"],"folder":"/tmp"}`},
	} {
		_, err := e.call(tc.tool, tc.args)
		if err == nil || !strings.Contains(err.Error(), "outside the workspace") && !strings.Contains(err.Error(), "absolute") {
			t.Errorf("%s %s: error %v, want a refusal", tc.tool, tc.args, err)
		}
	}
}

func TestWalksDoNotLeak(t *testing.T) {
	e := newEnv(t, Config{})
	hostile(t, e)
	got := e.mustCall("search_files", `{"queries":["TOPSECRET","content"]}`)
	want := "real.txt\n1:real content\n\nsub/inner.txt\n1:inner content"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search_files (-want +got):\n%s", diff)
	}
	list := e.mustCall("list_files", `{}`)
	if strings.Contains(list, "TOPSECRET") || !strings.Contains(list, "fifo (named pipe)") {
		t.Errorf("list_files = %q", list)
	}
}

// FuzzPath checks cleanPath and the Root behind it: no panic, an accepted
// path is local, and nothing opened through it is outside the workspace.
// Seeds are in testdata/fuzz/FuzzPath.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "/etc/passwd", "a/../../b", "rel-out", "sub/up-link"} {
		f.Add(s)
	}
	base := f.TempDir()
	outside := filepath.Join(base, "outside")
	ws := filepath.Join(base, "ws")
	for _, d := range []string{outside, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOPSECRET"), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("inside"), 0o600); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("../outside/secret.txt", filepath.Join(ws, "rel-out")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("../a.txt", filepath.Join(ws, "sub", "up-link")); err != nil {
		f.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		f.Fatal(err)
	}
	defer root.Close()
	f.Fuzz(func(t *testing.T, p string) {
		got, err := cleanPath(p)
		if err != nil {
			return
		}
		if !filepath.IsLocal(got) || filepath.IsAbs(got) || got == ".." || strings.HasPrefix(got, "../") {
			t.Fatalf("cleanPath(%q) = %q, not local", p, got)
		}
		if j := filepath.Join(ws, got); j != ws && !strings.HasPrefix(j, ws+string(filepath.Separator)) {
			t.Fatalf("cleanPath(%q) = %q joins to %q, outside %q", p, got, j, ws)
		}
		fh, _, err := openRegular(root, got)
		if err != nil {
			return
		}
		defer fh.Close()
		b := make([]byte, 64)
		n, _ := fh.Read(b)
		if strings.Contains(string(b[:n]), "TOPSECRET") {
			t.Fatalf("cleanPath(%q) = %q reads the outside secret", p, got)
		}
	})
}

// returnsSoon runs f and fails the test if it has not returned within two
// seconds, as when it blocks opening the named pipe fifo; opening the pipe
// for writing then lets it go.
func returnsSoon(t *testing.T, fifo string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Second):
		if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
		<-done
		t.Fatalf("blocked on the named pipe %s", filepath.Base(fifo))
		return nil
	}
}

// TestDirFSRefusesPipe stands for a folder swapped for a named pipe between
// its listing and its opening by list_files or the quota walk: root.FS()
// would block on it.
func TestDirFSRefusesPipe(t *testing.T) {
	e := newEnv(t, Config{})
	fifo := filepath.Join(e.dir(), "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	root, err := os.OpenRoot(e.dir())
	must(t, err)
	defer root.Close()
	fsys := dirFS{root}
	if err := returnsSoon(t, fifo, func() error { _, err := fsys.ReadDir("fifo"); return err }); err == nil {
		t.Error("ReadDir of a named pipe succeeded")
	}
	if err := returnsSoon(t, fifo, func() error {
		f, err := fsys.Open("fifo")
		if err == nil {
			f.Close()
		}
		return err
	}); err == nil {
		t.Error("Open of a named pipe succeeded")
	}
}

// TestCheckPath: a path copied in from elsewhere must be one the tools
// accept, already clean.
func TestCheckPath(t *testing.T) {
	tests := []struct{ path, want string }{
		{"notes/todo.md", ""},
		{"a/./b", "not a clean path"},
		{"a//b", "not a clean path"},
		{"a/", "not a clean path"},
		{"../x", "leads outside the workspace"},
		{"/etc/passwd", "absolute path"},
		{"a/.quiver-lock", "reserved"},
		{"a\x00b", "control character"},
		{"", "empty"},
		{strings.Repeat("d/", maxFolderDepth) + "f", ""},
		{strings.Repeat("d/", maxFolderDepth+1) + "f", "inside 65 folders; the limit is 64"},
	}
	for _, tc := range tests {
		err := CheckPath(tc.path)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckPath(%q) = %v; want %q", tc.path, err, tc.want)
		}
	}
}
