package python

import (
	"strings"
	"testing"
)

// FuzzParseReport feeds the parser of what comes back from the sandbox,
// which the script may forge: it must never panic, and what it accepts
// adds up exactly.
func FuzzParseReport(f *testing.F) {
	f.Add([]byte("{\"error\":\"\",\"stop\":\"\",\"files\":[]}\n"))
	f.Add([]byte("{\"error\":\"x\",\"stop\":\"memory\",\"files\":[{\"path\":\"a\",\"size\":2}]}\nab"))
	f.Add([]byte("{\"files\":[{\"path\":\"a\",\"size\":-1}]}\n"))
	f.Add([]byte("{\"files\":[{\"path\":\"../a\",\"size\":3}]}\nab"))
	f.Add([]byte("not json\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, files, ok := parseReport(b)
		if !ok {
			return
		}
		if len(files) != len(rep.Files) || len(rep.Files) > maxWriteBack {
			t.Fatalf("%d files for %d entries", len(files), len(rep.Files))
		}
		total := 0
		for i, f := range rep.Files {
			if int64(len(files[i])) != f.Size {
				t.Fatalf("file %d: %d bytes, header says %d", i, len(files[i]), f.Size)
			}
			total += len(files[i])
		}
		if head := strings.IndexByte(string(b), '\n'); head+1+total != len(b) {
			t.Fatalf("the sizes do not add up to the body")
		}
	})
}

func TestParseReport(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"no files", "{\"error\":\"e\"}\n", true},
		{"two files", "{\"files\":[{\"path\":\"a\",\"size\":1},{\"path\":\"b\",\"size\":2}]}\nxyz", true},
		{"short body", "{\"files\":[{\"path\":\"a\",\"size\":5}]}\nxyz", false},
		{"long body", "{\"files\":[{\"path\":\"a\",\"size\":1}]}\nxyz", false},
		{"no header line", "{}", false},
		{"too many files", "{\"files\":[" + strings.Repeat("{\"path\":\"a\",\"size\":0},", maxWriteBack) + "{\"path\":\"a\",\"size\":0}]}\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, ok := parseReport([]byte(tt.in)); ok != tt.ok {
				t.Errorf("ok = %v; want %v", ok, tt.ok)
			}
		})
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"abc":          "abc",
		"ab\xc3":       "ab",       // é cut in two by the output limit
		"a\xe2\x82":    "a",        // € cut after two of its three bytes
		"a\xffb":       "a\uFFFDb", // an invalid byte inside
		"\xf0\x9f\x98": "",
	} {
		if got := text([]byte(in)); got != want {
			t.Errorf("text(%q) = %q; want %q", in, got, want)
		}
	}
}
