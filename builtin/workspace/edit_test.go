package workspace

import (
	"os"
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	const text = "alpha beta\ngamma beta\ndelta\n"
	tests := []struct {
		name, args, want, wantFile, wantErr string
	}{
		{name: "unique", args: `{"path":"f.txt","old_string":"delta","new_string":"DELTA"}`,
			want: "Edited f.txt: replaced 1 occurrence(s); the file is now 28 bytes.", wantFile: "alpha beta\ngamma beta\nDELTA\n"},
		{name: "multi-line", args: `{"path":"f.txt","old_string":"beta\ndelta","new_string":"x"}`,
			wantFile: "alpha beta\ngamma x\n"},
		{name: "delete text", args: `{"path":"f.txt","old_string":"gamma beta\n","new_string":""}`,
			wantFile: "alpha beta\ndelta\n"},
		{name: "ambiguous", args: `{"path":"f.txt","old_string":"beta","new_string":"BETA"}`,
			wantErr: "old_string occurs 2 times in f.txt; include more surrounding text to make it unique, or set replace_all"},
		{name: "replace all", args: `{"path":"f.txt","old_string":"beta","new_string":"BETA","replace_all":true}`,
			want: "Edited f.txt: replaced 2 occurrence(s); the file is now 28 bytes.", wantFile: "alpha BETA\ngamma BETA\ndelta\n"},
		{name: "no match", args: `{"path":"f.txt","old_string":"epsilon","new_string":"x"}`,
			wantErr: "old_string was not found in f.txt"},
		{name: "whitespace matters", args: `{"path":"f.txt","old_string":"alpha  beta","new_string":"x"}`,
			wantErr: "was not found"},
		{name: "empty old", args: `{"path":"f.txt","old_string":"","new_string":"x"}`, wantErr: "old_string is empty"},
		{name: "same strings", args: `{"path":"f.txt","old_string":"delta","new_string":"delta"}`, wantErr: "the same"},
		{name: "missing file", args: `{"path":"g.txt","old_string":"a","new_string":"b"}`, wantErr: "g.txt does not exist"},
		{name: "escape", args: `{"path":"../f.txt","old_string":"a","new_string":"b"}`, wantErr: "outside the workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			e.put("f.txt", text)
			got, err := e.call("edit_file", tc.args)
			if tc.wantErr != "" {
				wantErr(t, err, "edit_file: ", tc.wantErr)
				if e.get("f.txt") != text {
					t.Errorf("f.txt changed to %q", e.get("f.txt"))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("edit_file = %q, want %q", got, tc.want)
			}
			if e.get("f.txt") != tc.wantFile {
				t.Errorf("f.txt = %q, want %q", e.get("f.txt"), tc.wantFile)
			}
		})
	}
}

func TestEditFileQuotas(t *testing.T) {
	e := newEnv(t, Config{MaxFileBytes: 20, MaxWorkspaceBytes: 25})
	e.put("f.txt", "0123456789", "g.txt", "0123456789", "big.txt", strings.Repeat("x", 21))
	_, err := e.call("edit_file", `{"path":"f.txt","old_string":"9","new_string":"9abcdefghijk"}`)
	wantErr(t, err, "per-file quota: f.txt would be 21 bytes; the limit is 20 bytes")
	_, err = e.call("edit_file", `{"path":"big.txt","old_string":"x","new_string":"y","replace_all":true}`)
	wantErr(t, err, "per-file quota: big.txt is 21 bytes")
	e.put("big.txt", "")
	_, err = e.call("edit_file", `{"path":"f.txt","old_string":"9","new_string":"9abcdef"}`)
	wantErr(t, err, "workspace quota: the workspace would hold 26 bytes; the limit is 25 bytes")
	if e.get("f.txt") != "0123456789" {
		t.Errorf("f.txt changed: %q", e.get("f.txt"))
	}
	e.mustCall("edit_file", `{"path":"f.txt","old_string":"9","new_string":"9abcde"}`)
	// Over the quota by other means, a shrinking edit still passes.
	e.put("big.txt", strings.Repeat("x", 20))
	_, err = e.call("edit_file", `{"path":"g.txt","old_string":"0","new_string":"0a"}`)
	wantErr(t, err, "workspace quota")
	e.mustCall("edit_file", `{"path":"big.txt","old_string":"xxxxx","new_string":"","replace_all":true}`)
}

// TestEditFileGrewSinceChecked stands for a file that grew past the
// per-file quota after edit_file measured it: editing the part read would
// write back a file cut short.
func TestEditFileGrewSinceChecked(t *testing.T) {
	e := newEnv(t, Config{MaxFileBytes: 10})
	e.put("f.txt", strings.Repeat("a", 30))
	root, err := os.OpenRoot(e.dir())
	must(t, err)
	defer root.Close()
	ws := &workspaces{cfg: Config{Root: e.root, MaxFileBytes: 10}.withDefaults()}
	text, err := ws.readForEdit(root, target{name: "f.txt", exists: true, size: 5})
	if err == nil {
		t.Fatalf("readForEdit gave %d bytes of a 30-byte file, want a refusal", len(text))
	}
	wantErr(t, err, "per-file quota: f.txt is over 10 bytes")
}
