package texttree

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrite: two trees of the same size are the same bytes, every file
// is text of 20 to 40 lines, and the markers are where Write says: the
// needle in files 7, 407 and 807 of 1,000, the marker in file 11.
func TestWrite(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := Write(d, 1000); err != nil {
			t.Fatal(err)
		}
	}
	var files int
	var needles, markers []string
	err := filepath.WalkDir(a, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		files++
		rel, _ := filepath.Rel(a, p)
		x, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two trees (%v)", rel, err)
		}
		if n := bytes.Count(x, []byte("\n")); n < 20 || n > 40 {
			t.Errorf("%s has %d lines", rel, n)
		}
		if strings.Contains(string(x), Needle) {
			needles = append(needles, rel)
		}
		if strings.Contains(string(x), Marker) {
			markers = append(markers, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != 1000 {
		t.Errorf("%d files, want 1000", files)
	}
	wantN := []string{"d007/f00007.txt", "d007/f00407.txt", "d007/f00807.txt"}
	if strings.Join(needles, " ") != strings.Join(wantN, " ") {
		t.Errorf("needle in %v, want %v", needles, wantN)
	}
	if len(markers) != 1 || markers[0] != "d011/f00011.txt" {
		t.Errorf("marker in %v, want d011/f00011.txt", markers)
	}
}
