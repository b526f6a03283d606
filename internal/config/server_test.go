package config_test

import (
	"strings"
	"testing"

	"github.com/quiverhq/quiver/internal/config"
)

func TestServerPublicURL(t *testing.T) {
	for _, tc := range []struct{ url, wantErr, base string }{
		{"", "", ""},
		{"https://quiver.example.com", "", "https://quiver.example.com"},
		{"https://quiver.example.com/", "", "https://quiver.example.com"},
		{"http://10.0.0.5:8080", "", "http://10.0.0.5:8080"},
		{"quiver.example.com", "scheme and host only", ""},
		{"ftp://quiver.example.com", "scheme and host only", ""},
		{"https://", "scheme and host only", ""},
		{"https://:443", "scheme and host only", ""},
		{"https://ana:pw@quiver.example.com", "user or password", ""},
		{"https://quiver.example.com/quiver", "no path, query or fragment", ""},
		{"https://quiver.example.com/?x=1", "no path, query or fragment", ""},
		{"https://quiver.example.com#top", "no path, query or fragment", ""},
		{"https://quiver.example.com?", "no path, query or fragment", ""},
		{"https://" + strings.Repeat("a", 500) + ".example", "longer than 500", ""},
		{"javascript:alert(1)", "scheme and host only", ""},
	} {
		cfg, err := config.ParseConfig([]byte("server:\n  public_url: '" + tc.url + "'\n"))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.url, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: err = %v, want %q", tc.url, err, tc.wantErr)
		case tc.wantErr == "" && cfg.Server.Base() != tc.base:
			t.Errorf("%q: Base() = %q, want %q", tc.url, cfg.Server.Base(), tc.base)
		}
	}
}
