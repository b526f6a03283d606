package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/quiverhq/quiver/tool"
)

func TestSearchFiles(t *testing.T) {
	e := newEnv(t, Config{MaxFileBytes: 1000})
	e.put(
		"src/main.go", "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
		"src/util.go", "package main\n\n// hello helper\nfunc hello() {}\n",
		"docs/guide.md", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
		"docs/école.md", "L'ÉCOLE est fermée\n",
		"bin/tool", "hello\x00binary",
		"big.log", strings.Repeat("hello\n", 200),
		"crlf.txt", "hello\r\nworld\r\n",
	)
	tests := []struct {
		name, args, want, wantErr string
	}{
		{name: "one string", args: `{"queries":["hello"]}`,
			want: "crlf.txt\n1:hello\n\nsrc/util.go\n3:// hello helper\n4:func hello() {}\n[skipped 1 files over 1000 bytes]"},
		{name: "case insensitive", args: `{"queries":["HELLO"],"case_insensitive":true,"folder":"src"}`,
			want: "src/main.go\n4:\tprintln(\"Hello\")\n\nsrc/util.go\n3:// hello helper\n4:func hello() {}"},
		{name: "case insensitive unicode", args: `{"queries":["école"],"case_insensitive":true}`,
			want: "docs/école.md\n1:L'ÉCOLE est fermée\n[skipped 1 files over 1000 bytes]"},
		{name: "several strings", args: `{"queries":["three","nine","thre"],"folder":"docs"}`,
			want: "docs/guide.md\n3:three\n9:nine"},
		{name: "context with gap", args: `{"queries":["three","nine"],"context":1,"folder":"docs"}`,
			want: "docs/guide.md\n2-two\n3:three\n4-four\n--\n8-eight\n9:nine\n10-ten"},
		{name: "context merges", args: `{"queries":["three","six"],"context":2,"folder":"docs"}`,
			want: "docs/guide.md\n1-one\n2-two\n3:three\n4-four\n5-five\n6:six\n7-seven\n8-eight"},
		{name: "context at edges", args: `{"queries":["one","ten"],"context":3,"glob":"*.md"}`,
			want: "docs/guide.md\n1:one\n2-two\n3-three\n4-four\n--\n7-seven\n8-eight\n9-nine\n10:ten"},
		{name: "glob on name", args: `{"queries":["package"],"glob":"m*.go"}`, want: "src/main.go\n1:package main"},
		{name: "glob on path", args: `{"queries":["package"],"glob":"src/u*"}`, want: "src/util.go\n1:package main"},
		{name: "no match", args: `{"queries":["zebra","yak"],"folder":"src","glob":"*.go"}`,
			want: `No matches for "zebra" or "yak" in src among files matching *.go.`},
		{name: "empty string", args: `{"queries":["a",""]}`, wantErr: "search string 2 is empty"},
		{name: "newline", args: `{"queries":["a\nb"]}`, wantErr: "search string 1 spans lines"},
		{name: "bad glob", args: `{"queries":["a"],"glob":"[z"}`, wantErr: `glob "[z" is not a valid pattern`},
		{name: "missing folder", args: `{"queries":["a"],"folder":"nope"}`, wantErr: "nope does not exist"},
		{name: "escaping folder", args: `{"queries":["a"],"folder":"../"}`, wantErr: "outside the workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.call("search_files", tc.args)
			if tc.wantErr != "" {
				wantErr(t, err, "search_files: ", tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("search_files %s (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestSearchFilesArgBounds(t *testing.T) {
	e := newEnv(t, Config{})
	for _, args := range []string{
		`{"queries":[]}`,
		`{"queries":["a","b","c","d","e","f"]}`,
		`{"queries":["a"],"context":4}`,
		`{"queries":["a"],"context":-1}`,
	} {
		var ae *tool.ArgError
		if _, err := e.call("search_files", args); !errors.As(err, &ae) {
			t.Errorf("search_files %s: error %v, want *tool.ArgError", args, err)
		}
	}
	// The handler holds the same lines if the schema is bypassed.
	for _, in := range []searchIn{
		{Queries: []string{"a", "b", "c", "d", "e", "f"}},
		{Queries: []string{"a"}, Context: 4},
	} {
		if err := checkSearch(in); err == nil {
			t.Errorf("checkSearch(%+v) passed", in)
		}
	}
	if _, err := e.call("search_files", `{"queries":["a","b","c","d","e"],"context":3}`); err != nil {
		t.Errorf("5 strings, context 3: %v", err)
	}
}

// TestSearchFilesLimit spreads 150 matches over 150 files in 15 folders: the
// first 100 in path order are shown, every time, with a note.
func TestSearchFilesLimit(t *testing.T) {
	e := newEnv(t, Config{})
	var blocks []string
	for i := range 150 {
		name := fmt.Sprintf("d%02d/f%02d.txt", i/10, i%10)
		e.put(name, fmt.Sprintf("filler\nmatch %d\nfiller\n", i))
		if i < 100 {
			blocks = append(blocks, fmt.Sprintf("%s\n2:match %d", name, i))
		}
	}
	want := strings.Join(blocks, "\n\n") + "\n[showing 100 matching lines; more were cut: narrow the search with folder, glob or a longer string]"
	for range 5 { // the worker pool must not make the order vary
		got := e.mustCall("search_files", `{"queries":["match"]}`)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("search_files (-want +got):\n%s", diff)
		}
	}
}

func TestSearchFilesLimitInOneFile(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("many.txt", strings.Repeat("hit\n", 300))
	got := e.mustCall("search_files", `{"queries":["hit"]}`)
	if n := strings.Count(got, ":hit"); n != maxSearchLines {
		t.Errorf("shown %d matching lines, want %d", n, maxSearchLines)
	}
	if !strings.HasSuffix(got, "100:hit\n[showing 100 matching lines; more were cut: narrow the search with folder, glob or a longer string]") {
		t.Errorf("output ends %q", got[len(got)-120:])
	}
}

func TestSearchFilesOutputBounded(t *testing.T) {
	e := newEnv(t, Config{})
	line := "needle " + strings.Repeat("z", 500) + "\n"
	for i := range 80 {
		e.put(fmt.Sprintf("f%02d.txt", i), line)
	}
	got := e.mustCall("search_files", `{"queries":["needle"]}`)
	if len(got) > maxOutputChars+200 {
		t.Errorf("output is %d chars; the budget is %d", len(got), maxOutputChars)
	}
	shown := strings.Count(got, "1:needle ")
	if shown == 0 || shown >= 80 {
		t.Errorf("shown %d matches, want some but not all 80", shown)
	}
	if !strings.HasSuffix(got, fmt.Sprintf("[showing %d matching lines; more were cut: narrow the search with folder, glob or a longer string]", shown)) {
		t.Errorf("no cut note: %q", got[len(got)-150:])
	}
	if !strings.Contains(got, strings.Repeat("z", maxLineChars-len("needle "))+"…") {
		t.Error("long lines are not cut with an ellipsis")
	}
}

func TestWithContext(t *testing.T) {
	data := []byte("a\nb\nc\nd\ne")
	starts := []int{0, 8} // lines 1 and 5
	got := withContext(data, starts, 1)
	want := []outLine{
		{num: 1, text: "a", match: true},
		{num: 2, text: "b"},
		{num: 4, text: "d", gap: true},
		{num: 5, text: "e", match: true},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(outLine{})); diff != "" {
		t.Errorf("withContext (-want +got):\n%s", diff)
	}
}

func TestCancelledCallIsInfra(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("a.txt", "hello\n")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct{ tool, args string }{
		{"search_files", `{"queries":["hello"]}`},
		{"list_files", `{}`},
		{"write_file", `{"files":[{"path":"b.txt","content":"x"}]}`},
	} {
		_, err := e.tools[tc.tool].Run(ctx, e.scope, json.RawMessage(tc.args))
		if !tool.IsInfra(err) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error %v, want an infrastructure error", tc.tool, err)
		}
	}
}
