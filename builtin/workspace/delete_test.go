package workspace

import (
	"testing"
)

func TestDeleteFile(t *testing.T) {
	tests := []struct {
		name, path, want, wantErr string
	}{
		{name: "file", path: "a.txt", want: "Deleted a.txt (3 bytes)."},
		{name: "nested", path: "d/b.txt", want: "Deleted d/b.txt (1 bytes)."},
		// Folders are refused on purpose, even empty ones.
		{name: "folder", path: "d", wantErr: "d is a folder; delete_file deletes files only"},
		{name: "empty folder", path: "empty", wantErr: "empty is a folder"},
		{name: "missing", path: "nope", wantErr: "nope does not exist"},
		{name: "root", path: ".", wantErr: "is a folder"},
		{name: "escape", path: "../x", wantErr: "outside the workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.put("a.txt", "abc", "d/b.txt", "b", "empty/.keep", "")
			got, err := e.call("delete_file", `{"path":"`+tc.path+`"}`)
			if tc.wantErr != "" {
				wantErr(t, err, "delete_file: ", tc.wantErr)
				if e.get("d/b.txt") != "b" || e.get("a.txt") != "abc" {
					t.Error("a file went missing")
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("delete_file = %q, %v; want %q", got, err, tc.want)
			}
			if e.get(tc.path) != "<missing>" {
				t.Errorf("%s still exists", tc.path)
			}
		})
	}
}
