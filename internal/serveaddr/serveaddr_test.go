package serveaddr_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/serveaddr"
)

func TestListening(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"0.0.0.0:9000":   "http://127.0.0.1:9000",
		"[::]:9000":      "http://[::1]:9000",
		"[::1]:7000":     "http://[::1]:7000",
		"10.1.2.3:80":    "http://10.1.2.3:80",
	} {
		addr, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := serveaddr.Listening(addr); got != want {
			t.Errorf("Listening(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestRecordAndBase: the public URL wins; else the recorded address
// (the last one recorded); else the fallback; a file holding anything
// else is an error naming it.
func TestRecordAndBase(t *testing.T) {
	dir := t.TempDir()
	const fallback = "http://127.0.0.1:8080"
	base := func(public string) (string, error) { return serveaddr.Base(dir, "", public) }
	if got, err := base(""); err != nil || got != fallback {
		t.Errorf("nothing recorded: %q, %v; want the fallback", got, err)
	}
	for _, addr := range []string{"http://127.0.0.1:41234", "http://127.0.0.1:5555"} {
		if err := serveaddr.Record(dir, addr); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := base(""); err != nil || got != "http://127.0.0.1:5555" {
		t.Errorf("recorded: %q, %v; want the last recorded", got, err)
	}
	if got, err := base("https://quiver.example.com/"); err != nil || got != "https://quiver.example.com" {
		t.Errorf("public URL: %q, %v", got, err)
	}
	if got, err := serveaddr.Base(dir, "10.0.0.7:9000", "https://quiver.example.com"); err != nil || got != "http://10.0.0.7:9000" {
		t.Errorf("an address given: %q, %v; want it over the rest", got, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, serveaddr.FileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the record's mode: %v, %v; want 0600", fi, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".serve-address-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	for _, bad := range []string{"javascript:alert(1)", "http://", "not a url at all", "http://h:1/login?token=x", strings.Repeat("x", 5000)} {
		if err := os.WriteFile(filepath.Join(dir, serveaddr.FileName), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := base(""); err == nil || !strings.Contains(err.Error(), serveaddr.FileName) {
			t.Errorf("record %q: %q, %v; want an error naming the file", bad, got, err)
		}
	}
}
