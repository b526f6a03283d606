package workspace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
)

type file struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func writeArgs(t *testing.T, files ...file) string {
	return jsonArgs(t, map[string]any{"files": files})
}

func TestWriteFile(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("old.txt", "old")
	got := e.mustCall("write_file", writeArgs(t, file{"a/b/new.md", "# new\n"}, file{"old.txt", "replaced"}))
	want := "Wrote a/b/new.md (new file, 6 bytes).\nWrote old.txt (replaced, 8 bytes)."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("write_file (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"a/b/new.md": "# new\n", "old.txt": "replaced"} {
		if got := e.get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	fi, err := os.Stat(filepath.Join(e.dir(), "a"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created folder: %v, %v; want mode 0700", fi, err)
	}
}

func TestWriteFileRefusesAll(t *testing.T) {
	tests := []struct {
		name  string
		files []file
		want  string
	}{
		{"bad path last", []file{{"ok1.txt", "x"}, {"ok2.txt", "y"}, {"../escape.txt", "z"}}, "outside the workspace"},
		{"absolute", []file{{"ok1.txt", "x"}, {"/tmp/x", "y"}}, "absolute path"},
		{"duplicate", []file{{"ok1.txt", "x"}, {"./ok1.txt", "y"}}, "ok1.txt is given twice"},
		{"folder target", []file{{"ok1.txt", "x"}, {"dir", "y"}}, "dir is a folder"},
		{"parent is a file", []file{{"ok1.txt", "x"}, {"small.txt/child.txt", "y"}}, "a parent folder of small.txt/child.txt is a file"},
		{"long existing", []file{{"ok1.txt", "x"}, {"long.txt", "short now"}}, "long.txt already exists and has 3001 characters"},
		{"empty path", []file{{"ok1.txt", "x"}, {"", "y"}}, "path is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.put("small.txt", "small", "long.txt", strings.Repeat("x", 3001), "dir/keep.txt", "k")
			_, err := e.call("write_file", writeArgs(t, tc.files...))
			wantErr(t, err, "write_file: nothing written: ", tc.want)
			for _, name := range []string{"ok1.txt", "ok2.txt"} {
				if got := e.get(name); got != "<missing>" {
					t.Errorf("%s was written (%q) though the call was refused", name, got)
				}
			}
		})
	}
}

func TestWriteFileCount(t *testing.T) {
	e := newEnv(t, Config{})
	four := writeArgs(t, file{"1", "a"}, file{"2", "b"}, file{"3", "c"}, file{"4", "d"})
	_, err := e.call("write_file", four)
	var ae *tool.ArgError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "maxItems") {
		t.Errorf("4 files: error %v, want a maxItems *tool.ArgError", err)
	}
	if _, err := e.call("write_file", `{"files":[]}`); !errors.As(err, &ae) {
		t.Errorf("0 files: error %v, want *tool.ArgError", err)
	}
	// The handler holds the same line if the schema is bypassed.
	ws := &workspaces{cfg: Config{Root: e.root}.withDefaults()}
	_, err = ws.write(t.Context(), e.scope, writeIn{Files: make([]fileIn, 4)})
	wantErr(t, err, "got 4 files; write 1 to 3 per call")
	if got := e.get("1"); got != "<missing>" {
		t.Errorf("file 1 written: %q", got)
	}
}

func TestWriteFileRewriteLimit(t *testing.T) {
	tests := []struct {
		name, existing, wantErr string
	}{
		{name: "3000 ASCII characters", existing: strings.Repeat("a", 3000)},
		{name: "3000 two-byte characters", existing: strings.Repeat("é", 3000)},
		{name: "3001 characters", existing: strings.Repeat("a", 3001), wantErr: "has 3001 characters; write_file does not replace existing files over 3000 characters: use edit_file"},
		{name: "3001 two-byte characters", existing: strings.Repeat("é", 3001), wantErr: "has 3001 characters"},
		{name: "far over", existing: strings.Repeat("a", 50_000), wantErr: "has 50000 bytes; write_file does not replace existing files over 3000 characters: use edit_file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.put("f.txt", tc.existing)
			_, err := e.call("write_file", writeArgs(t, file{"f.txt", "new"}))
			if tc.wantErr != "" {
				wantErr(t, err, tc.wantErr)
				if e.get("f.txt") != tc.existing {
					t.Error("the file changed")
				}
				return
			}
			if err != nil || e.get("f.txt") != "new" {
				t.Errorf("write_file: %v; content %q", err, e.get("f.txt"))
			}
		})
	}
}

func TestQuotas(t *testing.T) {
	cfg := Config{MaxFileBytes: 100, MaxWorkspaceBytes: 250, MaxFiles: 3}
	tests := []struct {
		name    string
		files   []file
		wantErr string
	}{
		{name: "file at the limit", files: []file{{"new.txt", strings.Repeat("x", 100)}}},
		{name: "file over", files: []file{{"new.txt", strings.Repeat("x", 101)}},
			wantErr: "per-file quota: new.txt would be 101 bytes; the limit is 100 bytes"},
		{name: "workspace over", files: []file{{"n1", strings.Repeat("x", 90)}, {"n2", strings.Repeat("x", 20)}},
			wantErr: "workspace quota: the workspace would hold 260 bytes; the limit is 250 bytes (now 150)"},
		{name: "replacing frees its old size", files: []file{{"a.txt", strings.Repeat("x", 100)}, {"b.txt", strings.Repeat("x", 100)}}},
		{name: "file count over", files: []file{{"n1", "x"}, {"n2", "y"}},
			wantErr: "file-count quota: the workspace would hold 4 files; the limit is 3 files"},
		{name: "file count at the limit", files: []file{{"n1", "x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cfg)
			e.put("a.txt", strings.Repeat("a", 75), "sub/b.txt", strings.Repeat("b", 75))
			must(t, os.Rename(filepath.Join(e.dir(), "sub/b.txt"), filepath.Join(e.dir(), "b.txt")))
			_, err := e.call("write_file", writeArgs(t, tc.files...))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, "nothing written", tc.wantErr)
			for _, f := range tc.files {
				if strings.HasPrefix(f.Path, "n") && e.get(f.Path) != "<missing>" {
					t.Errorf("%s was written", f.Path)
				}
			}
		})
	}
}

func TestWriteIsAtomic(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("run.sh", "#!/bin/sh\n")
	must(t, os.Chmod(filepath.Join(e.dir(), "run.sh"), 0o750))
	e.mustCall("write_file", writeArgs(t, file{"run.sh", "#!/bin/sh\necho hi\n"}, file{"d/x.txt", "x"}))
	e.mustCall("edit_file", `{"path":"run.sh","old_string":"hi","new_string":"ho"}`)
	var names []string
	for _, d := range []string{e.dir(), filepath.Join(e.dir(), "d")} {
		entries, err := os.ReadDir(d)
		must(t, err)
		for _, en := range entries {
			names = append(names, en.Name())
		}
	}
	// The lock file stays (every writer locks the same file); no
	// temporary file does.
	if diff := cmp.Diff([]string{lockName, "d", "run.sh", "x.txt"}, names); diff != "" {
		t.Errorf("files left behind (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(e.dir(), "run.sh"))
	must(t, err)
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("run.sh mode %v, want 0750 kept", fi.Mode().Perm())
	}
	if got := e.get("run.sh"); got != "#!/bin/sh\necho ho\n" {
		t.Errorf("run.sh = %q", got)
	}
}

// TestWriteFailureCleansUp makes the rename fail (the target became a
// folder after the check) and expects no temporary file left.
func TestWriteFailureCleansUp(t *testing.T) {
	e := newEnv(t, Config{})
	root, err := os.OpenRoot(e.dir())
	must(t, err)
	defer root.Close()
	must(t, os.MkdirAll(filepath.Join(e.dir(), "t", "inner"), 0o700))
	err = writeAtomic(root, target{name: "t"}, []byte("x"))
	if err == nil {
		t.Fatal("writeAtomic over a non-empty folder succeeded")
	}
	entries, _ := os.ReadDir(e.dir())
	if len(entries) != 1 || entries[0].Name() != "t" {
		t.Errorf("workspace holds %v, want only t", entries)
	}
}

// TestFolderQuota: folders count against MaxFiles on their own, since
// delete_file leaves them behind; missing parents shared by the files of a
// call count once.
func TestFolderQuota(t *testing.T) {
	e := newEnv(t, Config{MaxFiles: 3})
	e.mustCall("write_file", writeArgs(t, file{"p/q/1.txt", "1"}, file{"p/q/2.txt", "2"}))
	e.mustCall("delete_file", `{"path":"p/q/1.txt"}`)
	e.mustCall("write_file", writeArgs(t, file{"r/3.txt", "3"}))
	_, err := e.call("write_file", writeArgs(t, file{"s/4.txt", "4"}))
	wantErr(t, err, "nothing written", "folder-count quota: the workspace would hold 4 folders; the limit is 3 folders")
	if got := e.get("s/4.txt"); got != "<missing>" {
		t.Errorf("s/4.txt was written: %q", got)
	}
	e.mustCall("write_file", writeArgs(t, file{"p/4.txt", "4"})) // into a folder that exists
}

// TestWriteReplacesByRename checks that a write replaces the file by a new
// one rather than rewriting it in place: a reader holding the old file still
// sees the old content whole.
func TestWriteReplacesByRename(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("f.txt", "old content")
	old, err := os.Open(filepath.Join(e.dir(), "f.txt"))
	must(t, err)
	defer old.Close()
	e.mustCall("write_file", writeArgs(t, file{"f.txt", "new"}))
	e.mustCall("edit_file", `{"path":"f.txt","old_string":"new","new_string":"newer"}`)
	b, err := io.ReadAll(old)
	must(t, err)
	if string(b) != "old content" || e.get("f.txt") != "newer" {
		t.Errorf("old file reads %q, new one %q; want %q and %q", b, e.get("f.txt"), "old content", "newer")
	}
}
