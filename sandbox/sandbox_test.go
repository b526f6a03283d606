package sandbox_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/quiverhq/quiver/sandbox"
)

func TestValidate(t *testing.T) {
	in := func(name string, n int) sandbox.Input {
		return sandbox.Input{Name: name, Content: strings.Repeat("x", n)}
	}
	tests := []struct {
		name string
		job  sandbox.Job
		want string // "" for a valid job
	}{
		{"empty job", sandbox.Job{}, ""},
		{"three inputs at their cap", sandbox.Job{Code: strings.Repeat("1;", sandbox.MaxCodeBytes/2),
			Inputs: []sandbox.Input{in("a", sandbox.MaxInputBytes), in("b", 0), in("c", 1)}}, ""},
		{"limits at their maxima", sandbox.Job{Limits: sandbox.Limits{Wall: sandbox.MaxWall,
			MemoryBytes: sandbox.MaxMemoryBytes, OutputBytes: sandbox.MaxOutputBytes}}, ""},
		{"code too large", sandbox.Job{Code: strings.Repeat("x", sandbox.MaxCodeBytes+1)},
			"sandbox: code is 65537 bytes; the limit is 65536"},
		{"code not UTF-8", sandbox.Job{Code: "\xff"}, "sandbox: code is not valid UTF-8"},
		{"four inputs", sandbox.Job{Inputs: []sandbox.Input{in("a", 1), in("b", 1), in("c", 1), in("d", 1)}},
			"sandbox: 4 inputs; the limit is 3"},
		{"input too large", sandbox.Job{Inputs: []sandbox.Input{in("big", sandbox.MaxInputBytes+1)}},
			`sandbox: input "big" is 1048577 bytes; the limit is 1048576`},
		{"input not UTF-8", sandbox.Job{Inputs: []sandbox.Input{{Name: "r", Content: "a\xc0"}}},
			`sandbox: input "r" is not valid UTF-8`},
		{"input named twice", sandbox.Job{Inputs: []sandbox.Input{in("r", 1), in("r", 2)}},
			`sandbox: input "r" is given twice`},
		{"input without a name", sandbox.Job{Inputs: []sandbox.Input{in("", 1)}},
			`sandbox: input name "" must be 1 to 128 bytes`},
		{"input name with a newline", sandbox.Job{Inputs: []sandbox.Input{in("a\nb", 1)}},
			`sandbox: input name "a\nb" holds a control character or invalid UTF-8`},
		{"wall past its maximum", sandbox.Job{Limits: sandbox.Limits{Wall: time.Hour}},
			"sandbox: wall limit 1h0m0s is out of range (0 to 1m0s)"},
		{"negative wall", sandbox.Job{Limits: sandbox.Limits{Wall: -time.Second}},
			"sandbox: wall limit -1s is out of range (0 to 1m0s)"},
		{"memory below its minimum", sandbox.Job{Limits: sandbox.Limits{MemoryBytes: 1000}},
			"sandbox: memory limit 1000 bytes is out of range (1048576 to 536870912)"},
		{"output past its maximum", sandbox.Job{Limits: sandbox.Limits{OutputBytes: sandbox.MaxOutputBytes + 1}},
			"sandbox: output limit 1048577 bytes is out of range (0 to 1048576)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.job.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	want := sandbox.Limits{Wall: 10 * time.Second, MemoryBytes: 64 << 20, OutputBytes: 64 << 10}
	if diff := cmp.Diff(want, sandbox.Limits{}.WithDefaults()); diff != "" {
		t.Errorf("zero Limits (-want +got):\n%s", diff)
	}
	set := sandbox.Limits{Wall: time.Second, MemoryBytes: 2 << 20, OutputBytes: 10}
	if diff := cmp.Diff(set, set.WithDefaults()); diff != "" {
		t.Errorf("set Limits (-want +got):\n%s", diff)
	}
}

func TestCheckPath(t *testing.T) {
	tests := []struct {
		path, want, err string
	}{
		{"notes/todo.md", "notes/todo.md", ""},
		{"a/./b/../c.txt", "a/c.txt", ""},
		{"dir/", "dir", ""},
		{"..a", "..a", ""},
		{"", "", "path is empty"},
		{"/etc/passwd", "", "/etc/passwd is an absolute path; use a path relative to the workspace, like notes/todo.md"},
		{`\x`, "", `\x is an absolute path; use a path relative to the workspace, like notes/todo.md`},
		{"..", "", ".. leads outside the workspace; use a path inside it"},
		{"a/../../b", "", "a/../../b leads outside the workspace; use a path inside it"},
		{"a\x00b", "", "path contains a control character"},
		{"a\tb", "", "path contains a control character"},
		{"x/.quiver-lock", "", "x/.quiver-lock: names starting with .quiver- are reserved for Quiver's own files; use another name"},
		{strings.Repeat("a", sandbox.MaxPathBytes+1), "", "path is 1025 bytes long; the limit is 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := sandbox.CheckPath(tt.path)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([2]string{tt.want, tt.err}, [2]string{got, gotErr}); diff != "" {
				t.Errorf("CheckPath(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestCheckFolder(t *testing.T) {
	for _, p := range []string{"", ".", "./"} {
		if got, err := sandbox.CheckFolder(p); got != "." || err != nil {
			t.Errorf("CheckFolder(%q) = %q, %v; want the workspace", p, got, err)
		}
	}
	if _, err := sandbox.CheckFolder("../x"); err == nil {
		t.Errorf("CheckFolder(../x) accepted a folder outside")
	}
}

// FuzzCheckPath checks that whatever CheckPath accepts stays inside the
// workspace: local, clean, free of control characters and reserved names.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../a", "/a", "a/../..", "a\x00", ".quiver-x", `\a`, "a//b/", "./."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := sandbox.CheckPath(p)
		if err != nil {
			return
		}
		if !filepath.IsLocal(got) || filepath.Clean(got) != got || filepath.IsAbs(got) {
			t.Fatalf("CheckPath(%q) = %q, not a clean local path", p, got)
		}
		if strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("CheckPath(%q) = %q holds a control character", p, got)
		}
		for _, part := range strings.Split(got, "/") {
			if strings.HasPrefix(part, ".quiver-") || part == ".." {
				t.Fatalf("CheckPath(%q) = %q holds %q", p, got, part)
			}
		}
	})
}

// FuzzValidate checks that Validate never accepts a job past its bounds.
func FuzzValidate(f *testing.F) {
	f.Add("console.log(1)", "r1", "text", int64(0), 0)
	f.Add("\xff", "", "\xc0", int64(-1), -1)
	f.Add("", "a\x00", "", int64(1<<40), 1<<30)
	f.Fuzz(func(t *testing.T, code, name, content string, memory int64, output int) {
		job := sandbox.Job{
			Code:   code,
			Inputs: []sandbox.Input{{Name: name, Content: content}},
			Limits: sandbox.Limits{MemoryBytes: memory, OutputBytes: output},
		}
		if job.Validate() != nil {
			return
		}
		l := job.Limits.WithDefaults()
		switch {
		case !utf8.ValidString(code) || !utf8.ValidString(name) || !utf8.ValidString(content):
			t.Fatalf("accepted invalid UTF-8: %+v", job)
		case name == "" || strings.ContainsFunc(name, unicode.IsControl):
			t.Fatalf("accepted input name %q", name)
		case l.MemoryBytes < sandbox.MinMemoryBytes || l.MemoryBytes > sandbox.MaxMemoryBytes:
			t.Fatalf("accepted memory limit %d", l.MemoryBytes)
		case l.OutputBytes <= 0 || l.OutputBytes > sandbox.MaxOutputBytes:
			t.Fatalf("accepted output limit %d", l.OutputBytes)
		}
	})
}
