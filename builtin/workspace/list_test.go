package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListFiles(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("b.txt", "hello", "a/z.md", strings.Repeat("x", 2048), "a/deep/y.go", "package y\n", "c/.keep", "")
	must(t, os.Symlink("b.txt", filepath.Join(e.dir(), "link")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(e.dir(), "out")))
	tests := []struct {
		name, args, want, wantErr string
	}{
		{name: "all", args: `{}`, want: strings.Join([]string{
			"a/", "a/deep/", "a/deep/y.go (10 B)", "a/z.md (2.0 KiB)", "b.txt (5 B)",
			"c/", "c/.keep (0 B)", "link -> b.txt", "out -> (outside the workspace)"}, "\n")},
		{name: "folder", args: `{"folder":"a/"}`, want: "a/deep/\na/deep/y.go (10 B)\na/z.md (2.0 KiB)"},
		{name: "dot", args: `{"folder":"."}`, want: "a/\na/deep/"},
		{name: "empty folder", args: `{"folder":"a/deep/.."}`, want: "a/deep/\na/deep/y.go (10 B)\na/z.md (2.0 KiB)"},
		{name: "not a folder", args: `{"folder":"b.txt"}`, wantErr: "b.txt is not a folder"},
		{name: "missing", args: `{"folder":"nope"}`, wantErr: "nope does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.call("list_files", tc.args)
			if tc.wantErr != "" {
				wantErr(t, err, "list_files: ", tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "dot" {
				got = strings.Join(strings.Split(got, "\n")[:2], "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("list_files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListFilesEmptyFolder(t *testing.T) {
	e := newEnv(t, Config{})
	must(t, os.MkdirAll(filepath.Join(e.dir(), "empty"), 0o700))
	if got := e.mustCall("list_files", `{"folder":"empty"}`); got != "Folder empty is empty." {
		t.Errorf("list_files = %q", got)
	}
}

func TestListFilesBounded(t *testing.T) {
	e := newEnv(t, Config{})
	for i := range 600 {
		e.put(fmt.Sprintf("f%03d.txt", i), "x")
	}
	got := e.mustCall("list_files", `{}`)
	lines := strings.Split(got, "\n")
	if len(lines) != maxListEntries+1 {
		t.Fatalf("got %d lines, want %d entries and a note", len(lines), maxListEntries)
	}
	if want := "f499.txt (1 B)"; lines[maxListEntries-1] != want {
		t.Errorf("last entry %q, want %q", lines[maxListEntries-1], want)
	}
	if note := lines[maxListEntries]; note != "[listing cut at 500 entries; pass folder to list one part of the workspace]" {
		t.Errorf("note %q", note)
	}
}
