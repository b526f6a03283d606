package workspace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// numbered returns n lines "line 1" … "line n", each ending in a newline.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("five.txt", numbered(5), "empty.txt", "", "nonl.txt", "a\nb", "crlf.txt", "a\r\nb\r\n",
		"bin.dat", "head\x00tail", "dir/x.txt", "x")
	tests := []struct {
		name, args, want, wantErr string
	}{
		{name: "whole", args: `{"path":"five.txt"}`, want: "[five.txt: lines 1-5 of 5]\nline 1\nline 2\nline 3\nline 4\nline 5"},
		{name: "offset", args: `{"path":"five.txt","offset":4}`, want: "[five.txt: lines 4-5 of 5]\nline 4\nline 5"},
		{name: "offset and limit", args: `{"path":"five.txt","offset":2,"limit":2}`,
			want: "[five.txt: lines 2-3 of 5]\nline 2\nline 3\n\n[2 more lines; call read_file with offset=4 to read on]"},
		{name: "last line without newline", args: `{"path":"nonl.txt"}`, want: "[nonl.txt: lines 1-2 of 2]\na\nb"},
		{name: "carriage returns kept", args: `{"path":"crlf.txt"}`, want: "[crlf.txt: lines 1-2 of 2]\na\r\nb\r"},
		{name: "empty", args: `{"path":"empty.txt"}`, want: "empty.txt is empty."},
		{name: "cleaned path", args: `{"path":"./dir/../five.txt","limit":1}`,
			want: "[five.txt: lines 1-1 of 5]\nline 1\n\n[4 more lines; call read_file with offset=2 to read on]"},
		{name: "offset past end", args: `{"path":"five.txt","offset":6}`, wantErr: "offset 6 is past the end of five.txt, which has 5 lines"},
		{name: "binary", args: `{"path":"bin.dat"}`, wantErr: "bin.dat looks binary"},
		{name: "missing", args: `{"path":"nope.txt"}`, wantErr: "nope.txt does not exist"},
		{name: "folder", args: `{"path":"dir"}`, wantErr: "dir is a folder"},
		{name: "missing parent", args: `{"path":"five.txt/x"}`, wantErr: "five.txt/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.call("read_file", tc.args)
			if tc.wantErr != "" {
				wantErr(t, err, "read_file: ", tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read_file %s (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestReadFileArgBounds(t *testing.T) {
	e := newEnv(t, Config{})
	e.put("a.txt", "a\n")
	for _, args := range []string{
		`{"path":"a.txt","offset":0}`,
		`{"path":"a.txt","limit":0}`,
		`{"path":"a.txt","limit":2001}`,
	} {
		if _, err := e.call("read_file", args); err == nil {
			t.Errorf("read_file %s succeeded", args)
		}
	}
}

// TestReadFileBounded reads a 60,000-character file: each call stays within
// the output budget and says where to go on, and the pages add up to the file.
func TestReadFileBounded(t *testing.T) {
	e := newEnv(t, Config{})
	content := numbered(6000) // about 60 KB
	e.put("big.txt", content)
	var got strings.Builder
	offset, calls := 1, 0
	for ; offset > 0 && calls < 10; calls++ {
		out := e.mustCall("read_file", fmt.Sprintf(`{"path":"big.txt","offset":%d}`, offset))
		if len(out) > maxOutputChars+200 {
			t.Fatalf("call %d returned %d chars", calls, len(out))
		}
		header, body, _ := strings.Cut(out, "\n")
		if !strings.HasPrefix(header, "[big.txt: lines ") {
			t.Fatalf("header %q", header)
		}
		offset = 0
		if i := strings.LastIndex(body, "\n\n["); i >= 0 {
			fmt.Sscanf(body[i:], "\n\n[%d more lines; call read_file with offset=%d", new(int), &offset)
			body = body[:i]
		}
		got.WriteString(body + "\n")
	}
	if calls < 3 {
		t.Errorf("read the file in %d calls; the output budget should force at least 3", calls)
	}
	if got.String() != content {
		t.Errorf("pages do not add up to the file: got %d bytes, want %d", got.Len(), len(content))
	}
}

func TestReadFileLongLine(t *testing.T) {
	e := newEnv(t, Config{})
	long := strings.Repeat("é", 15_000) // 30,000 bytes
	e.put("min.js", long+"\nnext\n")
	got := e.mustCall("read_file", `{"path":"min.js"}`)
	want := "[min.js: lines 1-1 of 2]\n" + strings.Repeat("é", 10_000) +
		"\n\n[line 1 is 30000 bytes long; only the first 20000 are shown]\n[1 more lines; call read_file with offset=2 to read on]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read_file (-want +got):\n%s", diff)
	}
}
