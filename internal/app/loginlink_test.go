package app_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestLoginLinkAddress: quiver login-link points at where quiver serve
// last listened (a random port here, recorded in the data folder), not
// at 127.0.0.1:8080; the configuration's server.public_url wins over it
// (and is what serve's first-start link uses); --addr over both; the
// link printed from the record signs in on the running server.
func TestLoginLinkAddress(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "server:\n  public_url: https://quiver.example.com/\n")
	s := startServeWith(t, map[string]string{"QUIVER_DATA": dir + "/data"}, "--config", cfg)
	if !strings.HasPrefix(s.login, "https://quiver.example.com/login?token=") {
		t.Errorf("the first-start link %q: want it on the public URL", s.login)
	}
	linkRe := regexp.MustCompile(`^(\S+)/login\?token=\S+\n$`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"recorded", nil, s.base},
		{"public URL", []string{"--config", cfg}, "https://quiver.example.com"},
		{"given", []string{"--config", cfg, "--addr", "10.0.0.7:9000"}, "http://10.0.0.7:9000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runLive(t, dir+"/data", nil, "", append([]string{"login-link"}, tc.args...)...)
			m := linkRe.FindStringSubmatch(out)
			if code != 0 || m == nil || m[1] != tc.want {
				t.Fatalf("login-link: exit %d, stdout %q, stderr %q; want a link at %s", code, out, stderr, tc.want)
			}
			if tc.name != "recorded" {
				return
			}
			resp, err := http.Get(strings.TrimSpace(out))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the recorded link answers %d, want the sign-in page", resp.StatusCode)
			}
		})
	}
	bad := writeConfig(t, t.TempDir(), "server:\n  public_url: https://quiver.example.com/app\n")
	if code, _, stderr := runLive(t, dir+"/data", nil, "", "login-link", "--config", bad); code != 2 || !strings.Contains(stderr, "server.public_url") {
		t.Errorf("a public URL with a path: exit %d, %q; want a usage error naming server.public_url", code, stderr)
	}
}
